"""The course notebooks run from top to bottom on a CPU, as handed out."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    import nbclient
    import nbformat

    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.output_type == "error"]
    # what a student sees: no warning (tqdm's "IProgress not found" where ipywidgets is missing, deprecations)
    warnings = [output.text for output in outputs if output.output_type == "stream" and "Warning" in output.text]
    assert not warnings


def test_every_course_notebook_is_in_the_docs_and_none_is_missing():
    nav = (Path(__file__).resolve().parents[1] / "mkdocs.yml").read_text()
    listed = {line.split("notebooks/")[1].strip() for line in nav.splitlines() if "notebooks/" in line}
    assert NOTEBOOKS and listed == {path.name for path in NOTEBOOKS}
