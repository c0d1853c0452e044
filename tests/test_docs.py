"""The docs: the README's code runs as printed, every generated page is fresh, every file they name exists."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_blocks_run_and_reproduce(tmp_path, block):
    outputs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    assert outputs[0] and outputs[0] == outputs[1]


@pytest.mark.slow
def test_the_docs_site_builds_without_warnings(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "model-cards" / "darts-v0" / "index.html").exists()
    assert (tmp_path / "site" / "notebooks" / "03_rl_controller" / "index.html").exists()


def _build_docs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "build_docs.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)


def test_the_template_pages_are_what_their_templates_and_recordings_make():
    """docs/<page>.md of every docs/templates/<page>.md is fresh (rerun scripts/build_docs.py when not)."""
    done = _build_docs("--check", "--only", "templates")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_pages_written_by_commands_were_written_from_the_committed_data_and_code():
    """The model cards and docs/darts-diagnosis.md carry the stamp of the inputs they were written from (rerunning
    the commands takes minutes: a release does, with --check --rerun)."""
    done = _build_docs("--check", "--only", "commands")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_a_command_page_goes_stale_when_an_input_or_the_page_changes(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_docs

    for name, attribute in (("", "ROOT"), ("docs", "DOCS"), ("docs/results/command-pages.json", "STAMP")):
        monkeypatch.setattr(build_docs, attribute, tmp_path / name)
    (tmp_path / "nas_envs").mkdir()
    (tmp_path / "assets" / "data" / "figures").mkdir(parents=True)
    (tmp_path / "docs" / "results").mkdir(parents=True)
    data, figure, page = (tmp_path / "assets" / "data" / "records.jsonl", tmp_path / "assets" / "data" / "figures"
                          / "plot.png", tmp_path / "docs" / "card.md")
    data.write_text('{"a": 1}\n')
    figure.write_bytes(b"png")
    page.write_text("# Card\n")
    (tmp_path / "nas_envs" / "space.py").write_text("GENES = 3\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    assert build_docs.stamp_problems() == ["docs/results/command-pages.json is missing"]
    build_docs.STAMP.write_text(json.dumps(build_docs.stamp(build_docs.inputs_sha256(), {page: page.read_text()})))
    assert build_docs.stamp_problems() == []
    figure.write_bytes(b"another png")  # drawn by other commands, not read
    assert build_docs.stamp_problems() == []
    data.write_text('{"a": 1}\n{"a": 2}\n')
    assert build_docs.stamp_problems() == ["the data, bundles or code they read changed since they were written"]
    data.write_text('{"a": 1}\n')
    page.write_text("# Card, edited by hand\n")
    assert build_docs.stamp_problems() == ["docs/card.md changed since it was written"]


def test_a_generated_page_shows_the_recording_and_goes_stale_when_it_changes(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_docs

    monkeypatch.setattr(build_docs, "OUTPUTS", tmp_path / "outputs")
    monkeypatch.setattr(build_docs, "ROOT", tmp_path)
    (tmp_path / "outputs").mkdir()
    recording = {"command": "nas-envs list", "date": "2026-12-02", "commit": "abc1234", "machine": "a CPU, 2 cores",
                 "output": "first line\n  indented\nsecond section\n  kept\nlast\n"}
    (tmp_path / "outputs" / "listing.json").write_text(json.dumps(recording))
    template = tmp_path / "page.md"
    template.write_text('# Page\n\n{{output listing section="second section"}}\n')
    page = build_docs.render_template(template)
    assert "$ nas-envs list\nsecond section\n  kept\n```" in page and "first line" not in page
    assert "2026-12-02" in page and "abc1234" in page and "page.md" in page
    recording["output"] = recording["output"].replace("kept", "changed")
    (tmp_path / "outputs" / "listing.json").write_text(json.dumps(recording))
    assert build_docs.render_template(template) != page
    template.write_text("{{nonsense}}\n")
    with pytest.raises(SystemExit, match="unknown placeholder"):
        build_docs.render_template(template)


def test_every_file_the_docs_and_docstrings_name_exists():
    """A path like ``scripts/x.py`` or ``nas_envs/y/z.py`` named in the README, a template, a page or a docstring
    is a file of the repository (files move; their mentions must follow)."""
    named = re.compile(r"\b((?:nas_envs|scripts|studies|tests|docs|assets)/[\w./-]+\.(?:py|md|jsonl|json|sh))\b")
    sources = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "nas_envs").rglob("*.py"),
               *(ROOT / "scripts").glob("*.py"), *(ROOT / "studies").glob("*.py")]
    missing = sorted({f"{source.relative_to(ROOT)}: {path}" for source in sources
                      for path in named.findall(source.read_text())
                      if not re.search(r"[<*]|[A-Z]{3,}", path) and not (ROOT / path).exists()})
    assert not missing, missing


@pytest.mark.parametrize("folder", ["scripts", "studies"])
def test_the_index_of_scripts_and_studies_lists_each_file_once(folder):
    """scripts/README.md and studies/README.md have one line per file of their folder, and no other."""
    listed = re.findall(r"^\| `([\w.]+)` \|", (ROOT / folder / "README.md").read_text(), flags=re.M)
    files = sorted(p.name for p in (ROOT / folder).iterdir() if p.suffix in (".py", ".sh"))
    assert sorted(listed) == files and len(set(listed)) == len(listed)


def test_a_recording_holds_the_command_its_output_and_where_it_ran(tmp_path):
    script = str(ROOT / "scripts" / "record_output.py")
    subprocess.run([sys.executable, script, "loop", "--out-dir", str(tmp_path), "--shell",
                    "for a in 1 2; do echo line $a; done"], check=True, capture_output=True)
    subprocess.run([sys.executable, script, "argv", "--out-dir", str(tmp_path), "--", sys.executable, "-c",
                    "print('a b')"], check=True, capture_output=True)
    loop, argv = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("loop", "argv"))
    assert loop["output"] == "line 1\nline 2\n" and loop["command"].startswith("for a in")
    assert argv["output"] == "a b\n" and argv["command"].endswith("-c 'print('\"'\"'a b'\"'\"')'")
    assert {"date", "commit", "machine"} <= set(loop)
    failed = subprocess.run([sys.executable, script, "fails", "--out-dir", str(tmp_path), "--", "false"],
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "nothing recorded" in failed.stderr and not (tmp_path / "fails.json").exists()
