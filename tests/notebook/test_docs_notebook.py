"""docs/notebook.ipynb, run headless with nbclient in a real kernel: every cell runs without an
error (its own asserts check the engine against PyTorch), and the files it writes are there."""

import json
import os
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_notebook_runs_headless(tmp_path, monkeypatch):
    shutil.copy(ROOT / "docs" / "notebook.ipynb", tmp_path / "notebook.ipynb")
    # the kernel inherits these: this checkout's packages, and a data directory of its own
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("WIREGRAD_DATA", str(tmp_path / "data"))
    nb = nbformat.read(tmp_path / "notebook.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    text = "\n".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "engine " in text and "PyTorch " in text
    assert "trained: loss" in text
    widget = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(widget) == 1  # w: the editor's widget
    assert (tmp_path / "quadrants.html").stat().st_size > 100_000
    assert json.loads((tmp_path / "quadrants.json").read_text())["format"] == "wiregrad.graph"
