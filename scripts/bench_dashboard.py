"""How fast the dashboard lists a folder of 1,000 saved runs -> benchmarks/dashboard_list.json.

The folder: 700 RAG evaluations and 200 retrieval reports of 100 questions each, and 100 chunking
comparisons, all real reports saved with Report.save (one report per kind, saved again and again:
each save is a new run with its own id). Measured, each the median of 5 on a warm page cache:

- list_runs(folder): the library's listing, which parses every report.json whole;
- the server's listing, cold (a new Runs, as on the first page load) and warm (the same Runs
  again: finished runs are kept, only the folder is listed again);
- GET / on the real app under uvicorn on 127.0.0.1, over HTTP: the first request of a fresh
  server and a later one; the page holds all 1,000 rows.

The server's listing is checked equal to list_runs before anything is timed.

`--large` measures one large run instead -> benchmarks/dashboard_large.json: a RAG evaluation of
10,000 questions (5 passages and an answer each, a function as the judge), run unsaved and with
save_to= (report.json writes counted), then over HTTP from uvicorn on 127.0.0.1 the run page, a
question's page, the certificate PDF, the offline copy, and /experiments pairing it with a second
10,000-question run: each request's first answer (the run loaded and drawn) and a later one. The
same saving is timed at 1,000 questions, the size the issue measured (135 s saved, 0.4 s not).
`--large --pages-only` times the pages again over the folder a previous `--large` left
($VECTRIXDB_BENCH_FOLDER). `--large --before TREE` times only what a checkout at TREE (e.g. `git archive HEAD~1`) does with
the same folder, for the figures before a change.

`--small` (the tests' re-run) makes everything smaller (10 runs of 10 questions; --large: 100 and 50
questions), times each once, and `--out PATH` writes the JSON there: a check that it runs.
"""
from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._bench import versions, write_json  # noqa: E402

SMALL = "--small" in sys.argv
OUT = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else ROOT / "benchmarks" / "dashboard_list.json"
QUESTIONS = 10 if SMALL else 100
COPIES = (7, 2, 1) if SMALL else (700, 200, 100)  # RAG evaluations, retrieval reports, chunking comparisons
REPEAT = 1 if SMALL else 5


def make_folder(folder: str) -> dict:
    from vectrixdb.evaluation import Question, compare_chunking, retrieval_report, run_evaluation

    qs = [Question(f"question {i}: what does document {i % 7} say on page {i % 3 + 1}?", f"answer {i}",
                   (f"doc{i % 7}.pdf#page={i % 3 + 1}",), f"q{i}") for i in range(QUESTIONS)]

    def retrieve(q):
        n = int(q.split()[1].rstrip(":"))
        return [{"chunk_id": f"doc{(n + j) % 7}.pdf::{j}", "doc_id": f"doc{(n + j) % 7}.pdf", "pages": [j % 3 + 1],
                 "text": f"passage {j} for question {n} " * 8} for j in range(5)]

    def judge(metric, question, reference, answer, sources):
        return float(reference in answer), f"{metric}: looked for {reference!r}"

    rag = run_evaluation(lambda q: (retrieve(q), f"answer {q.split()[1].rstrip(':')}"), qs, judge=judge, k=5)
    retrieval = retrieval_report(retrieve, qs, k=(1, 3, 5))
    docs = [str(p) for p in sorted((ROOT / "data" / "sample").glob("*.md"))][:2]
    chunking = compare_chunking(docs, [Question("How long can a deferment last?", None, ("deferment.md",), "d")],
                                budget=300, techniques=["recursive", "fixed"], sizes=[300], headings=[False],
                                progress=False)
    for report, copies in zip((rag, retrieval, chunking), COPIES):
        for _ in range(copies):
            report.save(folder)
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files if f == "report.json"]
    return {"runs": len(sizes), "report_json_bytes_median": int(statistics.median(sizes)),
            "report_json_bytes_total": sum(sizes)}


def timed(fn, repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def serve(folder: str):
    import uvicorn

    from vectrixdb.server import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(folder), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{port}/"


def main() -> None:
    import httpx
    import pandas as pd

    from vectrixdb.evaluation import list_runs
    from vectrixdb.server.listing import Runs

    os.environ.setdefault("VECTRIXDB_HOME", tempfile.mkdtemp(prefix="vhome-"))
    with tempfile.TemporaryDirectory() as folder:
        made = make_folder(folder)
        pd.testing.assert_frame_equal(Runs(folder).frame(), list_runs(folder))
        warm = Runs(folder)
        warm.rows()
        seconds = {"list_runs": timed(lambda: list_runs(folder)),
                   "server_listing_cold": timed(lambda: Runs(folder).rows()),
                   "server_listing_warm": timed(warm.rows)}
        firsts, pages = [], []
        for _ in range(1 if SMALL else 3):
            server, url = serve(folder)
            start = time.perf_counter()
            got = httpx.get(url, timeout=60)
            firsts.append(time.perf_counter() - start)
            assert got.status_code == 200 and got.text.count("<tr data-run=") == made["runs"]
            pages.append(timed(lambda: httpx.get(url, timeout=60)))
            server.should_exit = True
            time.sleep(0.5)
        seconds["page_first_request"] = statistics.median(firsts)
        seconds["page_later_request"] = statistics.median(pages)
        page_bytes = len(got.content)
    result = {"what": f"list a folder of {made['runs']} saved runs ({COPIES[0]} RAG evaluations and {COPIES[1]} retrieval "
                      f"reports of {QUESTIONS} questions, {COPIES[2]} chunking comparisons), local disk, warm page cache",
              "small": SMALL, "load_average_at_end": os.getloadavg(),
              "how": "scripts/bench_dashboard.py: median of 5 (page first request: median of 3 fresh servers); "
                     "the page is GET / over HTTP from uvicorn on 127.0.0.1, all rows in one page",
              "folder": made, "page_bytes": page_bytes, "seconds": seconds,
              "under_one_second": seconds["page_first_request"] < 1.0,
              "versions": versions("vectrixdb", "pandas", "fastapi", "uvicorn", "jinja2", "fsspec")}
    write_json(OUT, result, indent=2)
    print(json.dumps(result, indent=2))


LARGE = 100 if SMALL else 10_000
LARGE_OUT = OUT if "--out" in sys.argv else ROOT / "benchmarks" / "dashboard_large.json"
SAVED = 50 if SMALL else 1000  # the size the issue measured saving at


def large_questions(n: int):
    from vectrixdb.evaluation import Question

    return [Question(f"question {i}: what does document {i % 50} say on page {i % 9 + 1}?", f"answer {i}",
                     (f"doc{i % 50}.pdf#page={i % 9 + 1}",), f"q{i}") for i in range(n)]


def large_system(shift: int):
    def system(q):
        n = int(q.split()[1].rstrip(":"))
        hits = [{"chunk_id": f"doc{(n + j * shift) % 50}.pdf::{j}", "doc_id": f"doc{(n + j * shift) % 50}.pdf",
                 "pages": [(n + j) % 9 + 1], "text": f"passage {j} for question {n} " * 6} for j in range(5)]
        return hits, f"answer {n if n % (3 + shift) else n + 1}"
    return system


def large_judge(metric, question, reference, answer, sources):
    return float(reference == answer), f"{metric}: compared with {reference!r}"


def timed_run(n: int, save_to: str | None, shift: int = 1) -> tuple[float, str | None, int]:
    """Seconds of run_evaluation over n questions, its run id, and how often report.json was written."""
    from vectrixdb import io as vio
    from vectrixdb.evaluation import run_evaluation

    real, writes = vio.overwrite_owned, []
    vio.overwrite_owned = lambda path, data: (writes.append(path), real(path, data))
    try:
        start = time.perf_counter()
        report = run_evaluation(large_system(shift), large_questions(n), judge=large_judge, k=5, save_to=save_to)
        return time.perf_counter() - start, report.get("run_id"), sum(str(w).endswith("report.json") for w in writes)
    finally:
        vio.overwrite_owned = real


def page_times(folder: str, a: str, b: str) -> dict:
    import httpx

    routes = {"run_page": f"/runs/{a}", "question_page": f"/runs/{a}/question?id=q{LARGE // 2}",
              "certificate_pdf": f"/runs/{a}/certificate.pdf", "offline_html": f"/runs/{a}/offline.html",
              "experiments": f"/experiments?a={a}&b={b}", "list": "/"}
    server, url = serve(folder)
    out: dict = {}
    try:
        with httpx.Client(base_url=url.rstrip("/"), timeout=3600) as client:
            for name, route in routes.items():
                start = time.perf_counter()
                got = client.get(route)
                first = time.perf_counter() - start
                assert got.status_code == 200, (route, got.status_code, got.text[-300:])
                out[name] = {"first": first, "later": timed(lambda: client.get(route), repeat=1 if SMALL else 3),
                             "bytes": len(got.content)}
    finally:
        server.should_exit = True
        time.sleep(0.5)
    return out


def large(before: str | None) -> None:
    os.environ.setdefault("VECTRIXDB_HOME", tempfile.mkdtemp(prefix="vhome-"))
    folder = os.environ.get("VECTRIXDB_BENCH_FOLDER") or tempfile.mkdtemp(prefix="dash-large-")
    ids_file = Path(folder) / "ids.json"
    if before:  # the same folder through another checkout's code: its pages only
        sys.path.insert(0, str(Path(before).resolve()))
        ids = json.loads(ids_file.read_text())
        print(json.dumps(page_times(folder, ids["a"], ids["b"]), indent=2))
        return
    if "--pages-only" in sys.argv:  # the saved runs of a previous --large in the same folder, pages again
        ids, result = json.loads(ids_file.read_text()), json.loads(LARGE_OUT.read_text())
        result["pages"] = page_times(folder, ids["a"], ids["b"])
        result["load_average_after_pages"] = os.getloadavg()
        write_json(LARGE_OUT, result, indent=2)
        print(json.dumps(result, indent=2))
        return
    seconds: dict = {}
    seconds[f"run_{SAVED}_unsaved"], _, _ = timed_run(SAVED, None)
    seconds[f"run_{SAVED}_saved"], _, writes_1000 = timed_run(SAVED, tempfile.mkdtemp(prefix="dash-1000-"))
    seconds[f"run_{LARGE}_unsaved"], _, _ = timed_run(LARGE, None)
    seconds[f"run_{LARGE}_saved"], a, writes = timed_run(LARGE, folder)
    _, b, _ = timed_run(LARGE, folder, shift=2)
    ids_file.write_text(json.dumps({"a": a, "b": b}))
    pages = page_times(folder, a, b)
    size = os.path.getsize(next(Path(folder).glob(f"*/runs/{a}/report.json")))
    result = {"what": f"one RAG evaluation of {LARGE:,} questions (5 passages and an answer each): saving it as it "
                      "runs, and its pages, PDF and offline copy from the dashboard",
              "how": "scripts/bench_dashboard.py --large: run_evaluation timed once each; each route over HTTP from "
                     "uvicorn on 127.0.0.1: the first request (loads and draws the run) and the median of 3 later ones",
              "report_json_bytes": size, "report_json_writes": {f"{SAVED}_questions": writes_1000,
                                                                f"{LARGE}_questions": writes},
              "seconds": seconds, "small": SMALL, "pages": pages, "load_average_after_pages": os.getloadavg(),
              "versions": versions("vectrixdb", "pandas", "fastapi", "uvicorn", "jinja2", "reportlab")}
    write_json(LARGE_OUT, result, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    if "--large" in sys.argv:
        large(sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None)
    else:
        main()
