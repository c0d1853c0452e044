"""The README's code runs as printed, and twice gives the same output (everything it draws from is seeded)."""

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


@pytest.mark.slow
def test_the_generated_darts_diagnosis_page_is_fresh(tmp_path):
    """docs/darts-diagnosis.md is what its script makes of the committed data now (rerun the script when not)."""
    out = tmp_path / "page.md"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "darts_diagnosis.py"), "--out", str(out)], check=True,
                   capture_output=True, cwd=ROOT)
    assert out.read_text() == (ROOT / "docs" / "darts-diagnosis.md").read_text()
