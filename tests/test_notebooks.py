"""The notebooks in examples/notebooks run end to end (issue 19, item 5): executed here with
nbclient on a fresh kernel, so a change that breaks a study a user would copy fails the tests."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from conftest import REPO_ROOT
from nbclient import NotebookClient

NOTEBOOKS = sorted((REPO_ROOT / "examples" / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_end_to_end(path: Path, tmp_path: Path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    assert not any(c.get("outputs") for c in notebook.cells if c.cell_type == "code"), (
        f"{path.name} is committed with outputs; clear them (they would go stale)"
    )
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)  # anything a notebook writes lands here
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute(env={**os.environ, "MPLBACKEND": "Agg"})
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors
    text = "".join(
        o.get("text", "") or o.get("data", {}).get("text/plain", "")
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "<ssdlab.Results 1 flow" in text  # the one-line repr
    assert "peak" in text and "IOPS at QD" in text
