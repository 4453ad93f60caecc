"""Every numbered notebook runs top to bottom on small data and draws its figures."""
import copy
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
FIGURES = {"03_retrieval_report", "04_scifact_cutoff", "05_sweep", "06_compare_chunking", "07_write_golden",
           "08_answers", "10_power_holes_ppi", "12_compare_embedders"}
NEEDS_MODEL = {"07_write_golden", "08_answers", "09_model_chunking"}  # these talk to the local chat model (the llama_server fixture)


def test_there_are_notebooks_and_each_is_its_source_run():
    import jupytext

    assert len(NOTEBOOKS) >= 9
    sources = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert [p.stem for p in sources] == [p.stem for p in NOTEBOOKS], "every source has its .ipynb, and no other"
    for path in NOTEBOOKS:
        source = jupytext.read(path.with_suffix(".py"))
        built = nbformat.read(path, as_version=4)
        cells = lambda nb: [(c.cell_type, c.source) for c in nb.cells]  # noqa: E731
        assert cells(source) == cells(built), (f"{path.name} is not its .py source run: python scripts/build_notebooks.py "
                                               "(or --keep-outputs NAME, for an edit of its text alone)")


def test_keep_outputs_takes_new_text_and_keeps_every_code_cells_outputs(tmp_path):
    """build_notebooks --keep-outputs: a text cell added or edited in the .py reaches the .ipynb, each
    code cell keeps its published outputs and id, and a code cell added is refused (it has no output)."""
    import importlib.util

    import jupytext

    spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "scripts" / "build_notebooks.py")
    build_notebooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_notebooks)
    header = "# %% [markdown]\n# # A title\n\n"
    source = tmp_path / "99_t.py"
    source.write_text(header + "# %%\nx = 1\n\n# %%\nx + 1\n")
    published = jupytext.read(source)
    published.cells[2].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=2)]
    published.cells[2].id = "kept-id"
    jupytext.write(published, tmp_path / "99_t.ipynb", fmt="ipynb")
    source.write_text(header + "# %%\nx = 1\n\n# %% [markdown]\n# Between.\n\n# %%\nx + 1\n\n"
                      "# %% [markdown]\n# ## What it shows\n# Two.\n")
    build_notebooks.keep_outputs(source)
    kept = nbformat.read(tmp_path / "99_t.ipynb", as_version=4)
    assert [c.cell_type for c in kept.cells] == ["markdown", "code", "markdown", "code", "markdown"]
    assert kept.cells[3].outputs[0]["data"]["text/plain"] == "2" and kept.cells[3].id == "kept-id"
    assert kept.cells[4].source == "## What it shows\nTwo."
    source.write_text(source.read_text() + "\n# %%\nx + 2\n")
    with pytest.raises(SystemExit, match="code cells"):
        build_notebooks.keep_outputs(source)


def test_no_published_progress_bar_shows_its_first_frame():
    """A tqdm bar saved as a widget shows "0/307" to whoever opens the file without its kernel: the
    published outputs hold the line each bar ended on (scripts/build_notebooks.py settles them)."""
    import json
    import re

    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                shown = "".join(data.get("text/plain", ""))
                stalled = "application/vnd.jupyter.widget-view+json" in data and (
                    re.search(r"\b0%\|", shown) or shown.strip() == "Output()")
                assert not stalled, f"{path.name}: {shown[:80]!r}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch, request):
    from nbclient import NotebookClient

    if path.stem in NEEDS_MODEL:
        monkeypatch.setenv("VECTRIXDB_WRITER_URL", request.getfixturevalue("llama_server") + "/chat/completions")
        monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "smollm2")
    monkeypatch.setenv("VECTRIXDB_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("VECTRIXDB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    if path.stem == "02_label_questions":  # run twice in one kernel: a second run meets no file the first one made
        nb.cells = nb.cells + copy.deepcopy(nb.cells)
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    if path.stem in FIGURES:
        assert images, f"{path.name} drew no figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saving_in_jupyterlab_leaves_the_paired_source_as_it_is(path):
    """JupyterLab with jupytext writes the .py from the notebook it holds, whose kernel is the user's
    own (here "vectrixdb") and whose jupytext may be another version: the header filters both out,
    so saving changes nothing in the reviewed source."""
    import jupytext

    held = jupytext.read(path)  # what JupyterLab opens
    held.metadata["kernelspec"] = {"display_name": "vectrixdb (.venv)", "language": "python", "name": "vectrixdb"}
    held.metadata.setdefault("jupytext", {}).setdefault("text_representation", {})["jupytext_version"] = "9.9.9"
    assert jupytext.writes(held, fmt="py:percent") == path.with_suffix(".py").read_text()
