import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_tutorial_runs_and_writes_its_plot(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tutorial.py"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert "DARTS V2 on the proxy" in result.stdout
    assert "Genotype(normal=" in result.stdout  # the ansi render of the finished architecture
    table_lines = [line for line in result.stdout.splitlines() if line.startswith(("rs ", "re "))]
    assert len(table_lines) == 2
    assert (tmp_path / "anytime.png").read_bytes()[:4] == b"\x89PNG"
    assert len(list(tmp_path.glob("*/seed_*.jsonl"))) == 6
