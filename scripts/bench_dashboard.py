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

from scripts._bench import versions  # noqa: E402

OUT = ROOT / "benchmarks" / "dashboard_list.json"
QUESTIONS = 100


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
    for report, copies in ((rag, 700), (retrieval, 200), (chunking, 100)):
        for _ in range(copies):
            report.save(folder)
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files if f == "report.json"]
    return {"runs": len(sizes), "report_json_bytes_median": int(statistics.median(sizes)),
            "report_json_bytes_total": sum(sizes)}


def timed(fn, repeat: int = 5) -> float:
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
        for _ in range(3):
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
    result = {"what": f"list a folder of {made['runs']} saved runs (700 RAG evaluations and 200 retrieval reports "
                      f"of {QUESTIONS} questions, 100 chunking comparisons), local disk, warm page cache",
              "how": "scripts/bench_dashboard.py: median of 5 (page first request: median of 3 fresh servers); "
                     "the page is GET / over HTTP from uvicorn on 127.0.0.1, all rows in one page",
              "folder": made, "page_bytes": page_bytes, "seconds": seconds,
              "under_one_second": seconds["page_first_request"] < 1.0,
              "versions": versions("vectrixdb", "pandas", "fastapi", "uvicorn", "jinja2", "fsspec")}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
