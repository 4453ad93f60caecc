"""Run the notebooks from their sources and write the .ipynb beside each, with outputs and figures.

usage: python scripts/build_notebooks.py [--no-run | --keep-outputs | --settle] [--small] [NAME ...]

The sources are notebooks/NN_name.py in jupytext's percent format (reviewable and lintable); each
is paired with notebooks/NN_name.ipynb, which holds the published outputs. Each notebook imports
only the public API and makes its own scratch home, so any order gives the same output. CI runs
them again on small data (tests/test_notebooks.py sets VECTRIXDB_NOTEBOOK_SMALL=1); the committed
.ipynb files are full-data runs. 08_answers needs a chat model: VECTRIXDB_WRITER_URL and
VECTRIXDB_WRITER_MODEL (see tests/llama_server.py for the local one).

--keep-outputs takes each cell's source from the .py and keeps the .ipynb's published outputs, for
an edit that does not change what the full-data run shows (a small-data setting, a comment). It
refuses when the cells' number or kinds differ, so an output never lands beside another cell.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def sources() -> dict[str, Path]:
    return {p.stem: p for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))}


def build(source: Path, run: bool, timeout: int = 3600) -> Path:
    import jupytext

    nb = jupytext.read(source)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    target = source.with_suffix(".ipynb")
    if run:
        from nbclient import NotebookClient

        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
        settle(nb)
    jupytext.write(nb, target, fmt="ipynb")
    return target


def settle(nb) -> int:
    """Progress bars as the text they ended on: a tqdm bar in a notebook is a widget whose saved
    output is its first frame ("0/307"), so a reader who opens the file without a live kernel (or on
    GitHub) sees every bar stalled at 0%. Each bar's output becomes the line it ended on, read from
    the widget state the run saved, or nothing where the bar hid itself when done; an Output widget
    becomes the outputs it held. Other widgets (the
    review widget) are kept. Returns how many outputs were replaced."""
    import html

    import nbformat

    states = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    model = lambda ref: states.get(str(ref).removeprefix("IPY_MODEL_")) or {}  # noqa: E731
    replaced = 0
    for cell in nb.cells:
        outputs = []
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            widget = model(view["model_id"]) if view else {}
            kids = [model(k) for k in widget.get("state", {}).get("children", [])]
            layout = model(widget.get("state", {}).get("layout")).get("state", {})
            if widget.get("model_name") == "HBoxModel" and (layout.get("visibility") == "hidden"
                                                           or layout.get("display") == "none"):
                replaced += 1  # a bar that hid itself when done (tqdm's leave=False): a reader saw none
            elif widget.get("model_name") == "HBoxModel" and [k.get("model_name") for k in kids][:1] == ["HTMLModel"] \
                    and any(k.get("model_name", "").endswith("ProgressModel") for k in kids):
                text = " ".join(html.unescape(str(k["state"].get("value", ""))) for k in kids if k["model_name"] == "HTMLModel")
                outputs.append(nbformat.v4.new_output("stream", name="stderr", text=text.replace("\u2007", " ") + "\n"))
                replaced += 1
            elif widget.get("model_name") == "OutputModel":
                outputs += [nbformat.from_dict(o) for o in widget["state"].get("outputs", [])]
                replaced += 1
            else:
                outputs.append(out)
        if cell.cell_type == "code":
            cell.outputs = outputs
    return replaced


def keep_outputs(source: Path) -> Path:
    """The .ipynb beside source with the cells of source and the published outputs kept: its code
    cells must be the published ones in number and order (each keeps its outputs); text cells may be
    added, removed or edited, since they hold no output."""
    import jupytext

    fresh = jupytext.read(source)
    target = source.with_suffix(".ipynb")
    published = jupytext.read(target)
    code = [c for c in published.cells if c.cell_type == "code"]
    if len(code) != sum(c.cell_type == "code" for c in fresh.cells):
        raise SystemExit(f"{source.name} and {target.name} differ in their code cells "
                         f"({sum(c.cell_type == 'code' for c in fresh.cells)} and {len(code)}): run it again instead")
    ran, text_ids = iter(code), {c.source: c.get("id") for c in published.cells if c.cell_type != "code"}
    for cell in fresh.cells:
        if cell.cell_type == "code":
            old = next(ran)
            cell.outputs, cell.execution_count, cell.metadata = old.outputs, old.execution_count, old.metadata
            cell.id = old.get("id", cell.get("id"))
        elif text_ids.get(cell.source):
            cell.id = text_ids[cell.source]  # an unchanged text cell keeps its id: the diff shows only what changed
    fresh.metadata = {**published.metadata, "jupytext": fresh.metadata.get("jupytext", {})}  # the pairing's settings, as the source says
    jupytext.write(fresh, target, fmt="ipynb")
    return target


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--no-run", action="store_true")
    how.add_argument("--keep-outputs", action="store_true",
                     help="take the sources from the .py and keep the published outputs (no run)")
    how.add_argument("--settle", action="store_true",
                     help="only turn the published outputs' progress bars into the lines they ended on (no run)")
    parser.add_argument("--small", action="store_true", help="run on the small data CI uses (the kernel inherits it)")
    parser.add_argument("--timeout", type=int, default=3600,
                        help="seconds one cell may run (notebook 06's full comparison takes over an hour on two busy cores)")
    args = parser.parse_args()
    if args.small:
        os.environ["VECTRIXDB_NOTEBOOK_SMALL"] = "1"
    found = sources()
    unknown = sorted(set(args.names) - set(found))
    if unknown:
        print(f"no notebook source {unknown}; known: {sorted(found)}", file=sys.stderr)
        return 2
    for name in args.names or found:
        if args.settle:
            import jupytext

            target = found[name].with_suffix(".ipynb")
            nb = jupytext.read(target)
            if settle(nb):
                jupytext.write(nb, target, fmt="ipynb")
            done = target
        else:
            done = keep_outputs(found[name]) if args.keep_outputs else build(found[name], not args.no_run, args.timeout)
        print("wrote", done, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
