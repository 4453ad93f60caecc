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
# # 8. Answers: a tiny RAG, judged
# A small RAG over uber_2021.pdf answered by a local chat model (the settings name it: VECTRIXDB_WRITER_URL and VECTRIXDB_WRITER_MODEL; the published run used SmolLM2-135M-Instruct behind llama.cpp's server), scored with Vecta's evaluation types, a judge checked against hand scores, and two experiments compared. A 135M model writes poor answers and is a poor judge: read the numbers as the method, not as a verdict.

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
from vectrixdb.evaluation import ChatWriter, load_questions, run_evaluation, compare_runs, calibrate, list_runs
from vectrixdb.reading import Document, read
PAGES = 12 if SMALL else 40
doc = read(str(DATA / "pdfs" / "uber_2021.pdf"))
doc = Document(doc.doc_id, doc.markdown[: doc.pages[PAGES - 1].end], doc.pages[:PAGES], doc.source, doc.notes)
db = Vectrix("uber")
db.add_documents([doc], chunk="structure", chunk_size=800)
questions = [q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
             if all(int(e.rsplit("=", 1)[1]) <= PAGES for e in q.expected)][: 2 if SMALL else 12]
writer = ChatWriter.from_environment(cache=str(Path(os.environ["VECTRIXDB_HOME"]) / "chat.sqlite"), response_format="json_object",
                                     extra_body={"repeat_penalty": 1.3}, max_tokens=80 if SMALL else 160)
len(questions), writer

# %% [markdown]
# The system: search, then answer from the top passages alone. It returns (passages, answer), so this is a RAG evaluation:

# %%
from vectrixdb.chat import passage
ANSWER = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 300}}, "required": ["answer"]}

PASSAGE = 400 if SMALL else 1200   # characters of each passage the model reads (a 135M model's window is small)

def rag(k, mode):
    def system(question):
        hits = db.search(question, k, mode=mode)
        context = "\n\n".join(passage(h.text[:PASSAGE], f"page {h.pages[0]}") for h in hits)
        got = writer.ask([{"role": "system", "content": "Answer from the passages only, in one sentence. Reply with JSON: answer."},
                          {"role": "user", "content": context + "\n\n" + passage(question, "question")}], ANSWER)
        return ([h.to_dict() for h in hits], got.value["answer"] if got.ok else "")
    return system

runs = tempfile.mkdtemp(prefix="evaluations-")
a = run_evaluation(rag(2 if SMALL else 3, "dense"), questions, judge=writer, save_to=runs, name="dense top 3")
a["levels"]["page"], a["metrics"], a["outcomes"]

# %% [markdown]
# Each question keeps what came back against what was expected, the answer and the judge's reasons:

# %%
a.frame[["page expected", "page matched", "page missed", "answer", "expected_answer", "accuracy", "accuracy reason"]]

# %%
a.plot();

# %% [markdown]
# A second experiment, hybrid search with five passages, paired with the first question by question. Only questions
# the judge scored in both runs are paired (`paired` counts them), so `a` and `b` here can differ from each run's own mean:

# %%
b = run_evaluation(rag(2 if SMALL else 5, "hybrid"), questions, judge=writer, save_to=runs, name="hybrid top 5")
experiment = compare_runs(a, b)
experiment.frame[["a", "b", "difference", "ci low", "ci high", "p_value", "p_holm", "verdict", "detectable", "wins", "losses"]]

# %%
experiment.plot();

# %%
list_runs(runs)[["name", "type", "status", "page_f1@10", "doc_f1@10", "accuracy", "groundedness", "duration_s", "questions"]]

# %% [markdown]
# Should we believe the judge? Hand scores we are sure of: each golden answer is right for its own question (1) and wrong for another (0). The judge's agreement with them:

# %%
labelled = [{"metric": "accuracy", "question": q.question, "reference": q.reference, "answer": q.reference, "human": 1.0}
            for q in questions] + [{"metric": "accuracy", "question": q.question, "reference": q.reference,
                                    "answer": questions[(i + 1) % len(questions)].reference, "human": 0.0}
                                   for i, q in enumerate(questions)]
agreement = calibrate(writer, labelled)
{key: agreement[key] for key in ("items", "scored", "kappa", "weighted_kappa", "spearman", "agreement")}

# %%
agreement.plot();

# %%
writer.totals()
