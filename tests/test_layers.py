"""What ships to users never imports what builds the bundles: a static check of every import statement."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nas_envs"
SHIPPED = ("spaces", "surrogates", "benchmarks", "envs", "agents")
BUILDING = ("nas_envs.groundtruth", "nas_envs.fitting")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_shipped_layers_import_nothing_that_builds_bundles():
    files = [p for room in SHIPPED for p in (PACKAGE / room).rglob("*.py")]
    files += [PACKAGE / name for name in ("__init__.py", "catalogue.py", "assets.py", "files.py", "checks.py")]
    offending = {str(p.relative_to(PACKAGE)): sorted(m for m in imported_modules(p) if m.startswith(BUILDING))
                 for p in files}
    assert len(files) > 30 and not {p: m for p, m in offending.items() if m}
