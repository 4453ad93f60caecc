"""The rows of the published figures, read from benchmarks/*.json (never typed).

usage: python scripts/figures_table.py            # print the table

Each row names its file; a file that is missing, or lacks a figure, is an error, not a blank cell.
The documentation's table (docs/figures.md) is these rows with the machine each was measured on:
scripts/docs_figures.py --write puts it there, and tests/test_docs_site.py checks it is current.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str) -> dict:
    return json.loads((ROOT / "benchmarks" / name).read_text())


def _ms(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def rows() -> list[tuple[str, str, str]]:
    cut = _load("answer_cutoff_scifact_minilm.json")
    r = cut["retrieval"]
    metrics = _load("metrics_speed.json")
    s = metrics["seconds"]
    ingest = _load("ingest_scifact.json")
    lat = ingest["search_latency_ms"]
    reading_file = _load("reading.json")
    reading = reading_file["reading"]
    keyword_file = _load("keyword_after_add.json")
    keyword = keyword_file["target"]
    before = keyword_file["before"]["keyword_search_right_after_add"]["other_reader_process"]["p50_ms"]
    dashboard = _load("dashboard_list.json")["seconds"]
    out = [
        ("SciFact test, dense nDCG@10 / R@100 (MTEB: 0.6451)",
         f"{r['dense']['ndcg@10']:.4f} / {r['dense']['recall@100']:.3f}", "answer_cutoff_scifact_minilm.json"),
        ("SciFact test, keyword (bm25s, English stop words) nDCG@10 (BEIR BM25 0.665)", f"{r['keyword']['ndcg@10']:.4f}",
         "same"),
        ("SciFact test, hybrid (RRF) nDCG@10", f"{r['hybrid']['ndcg@10']:.4f}", "same"),
        (f"SciFact answer cut-off, {cut.get('mode', 'dense')} search: separation (answer outscores a near miss): "
         "all / SciFact's own near misses / outside questions",
         " / ".join(f"{x['separation']:.3f} [{x['ci95'][0]:.3f}, {x['ci95'][1]:.3f}]" for x in
                    ({"separation": cut["separation"], "ci95": cut["separation_ci95"]},
                     cut["separations"]["scifact_near_misses"], cut["separations"]["outside"])), "same"),
        _coverage_row(_load("ppi_coverage.json")),
        (f"metrics on 100k queries x 100 results from dicts, one run on {_where(metrics)}: vectrixdb / one Python pass "
         "reading every id and score (ratio; target <= 3x); ranx (warm) / ir_measures / pytrec_eval (times vectrixdb's); "
         "vectrixdb's peak memory (tracemalloc); queries whose values differ from pytrec_eval's",
         f"{s['vectrixdb_untraced']:.2f} s / {s['floor_read_every_id_and_score']:.2f} s ({metrics['vectrixdb_vs_floor']:.1f}x); "
         f"{s['ranx_warm']:.1f} s / {s['ir_measures']:.1f} s / {s['pytrec_eval']:.1f} s ({metrics['vectrixdb_vs_ranx_warm']:.0f}x "
         f"/ {metrics['vectrixdb_vs_ir_measures']:.0f}x / {metrics['vectrixdb_vs_pytrec_eval']:.0f}x); "
         f"{metrics['peak_memory_mb']:.0f} MB; {_trec_differ(metrics)}",
         "metrics_speed.json"),
        ("ingesting SciFact's 5,183 abstracts: vectrixdb vs plain `SentenceTransformer.encode`",
         f"{ingest['vectrixdb_cold_ingest']['passages_per_s']:.1f} vs "
         f"{ingest['plain_sentence_transformers_encode']['passages_per_s']:.1f} passages/s", "ingest_scifact.json"),
        ("re-ingesting with a warm cache", f"{ingest['warm_speedup_over_cold']:.0f}x faster than cold", "same"),
        ("search p50 (query embedding cached): dense / keyword / hybrid",
         f"{_ms(lat['dense']['p50_ms'])} / {_ms(lat['keyword']['p50_ms'])} / {_ms(lat['hybrid']['p50_ms'])} ms", "same"),
        ("keyword search p50 in another process right after a one-document add, 20,000 chunks: now / before",
         f"{keyword['measured_p50_ms_other_reader']:.1f} ms / {before:.0f} ms", "keyword_after_add.json"),
        (f"reading the two 10-K PDFs (uber_2021, lyft_2021) on {_where(reading_file)}, wall: the default pdfium reader "
         "/ pypdf's reader, one process per core / one process (pypdf's the same documents); pypdf per core over pdfium",
         " and ".join(f"{v['pages_per_s']:.1f} / {v['pypdf']['pages_per_s']:.1f} / {v['pypdf']['one_process_pages_per_s']:.1f}"
                      f" ({v['pypdf_per_core_over_default']:.1f}x)" for v in reading.values())
         + " pages/s" + ("" if all(v["pypdf"]["same_document"] for v in reading.values()) else " (DOCUMENTS DIFFER)"),
         "reading.json"),
        *_fast_readers(reading_file),
        *_compare_chunking(_load("compare_chunking_uber.json"), "compare_chunking_uber.json"),
        ("dashboard: listing a folder of 1,000 saved runs (first page load)", f"{dashboard['page_first_request']:.2f} s",
         "dashboard_list.json"),
    ]
    for name, make in OPTIONAL:
        path = ROOT / "benchmarks" / name
        if path.exists():
            out += make(json.loads(path.read_text()), name)
    return out


def _fast_readers(d: dict) -> list[tuple[str, str, str]]:
    """The pdfium reader's CPU beside pypdfium2's plain text (the floor) and pdftotext, same run,
    when the reading file measured them."""
    fast = {name: v["fast_readers"] for name, v in d["reading"].items() if "fast_readers" in v}
    if not fast:
        return []
    cpu = lambda f, way: f"{f['cpu_seconds'][way]:.2f}" if way in f["cpu_seconds"] else "-"  # noqa: E731
    return [(f"reading the two 10-Ks in one process on {_where(d)}, CPU seconds: the pdfium reader "
             "(the default) / pypdfium2's plain text / pdftotext -layout; the reader over plain text "
             "(target <= 3x)",
             " and ".join(f"{cpu(f, 'pdfium_reader')} / {cpu(f, 'pypdfium2_plain_text')} / {cpu(f, 'pdftotext_layout')} "
                          f"({f['cpu_ratio_to_plain_text']:.2f}x){_short_read(f)}" for f in fast.values()), "same")]


def _short_read(fast: dict) -> str:
    """A note where pdftotext read under half the characters the reader did (its CPU then reads nothing)."""
    got, ours = fast.get("pdftotext_characters"), fast.get("pdfium_reader_characters")
    return f" [pdftotext read only {got:,} characters]" if got is not None and ours and got < ours / 2 else ""


def _trec_differ(metrics: dict) -> str:
    """How many queries pytrec_eval scores differently, and whether trec_eval's single-precision scores explain them."""
    d = metrics["pytrec_eval_per_query"]
    n = d["number_that_differ"]
    if not n:
        return "none"
    why = "scores equal in float32, as trec_eval keeps them, tie there" if d[
        "all_equal_once_scores_are_rounded_to_float32_as_trec_eval_stores_them"] else "NOT EXPLAINED"
    return f"{n} of {d['queries']:,} ({why}); the others within {d['max_abs_difference_on_the_others']:.0e}"


def _late(d: dict, name: str):
    r = d["results"]
    return [(f"SciFact nDCG@10 over {d['corpus']['documents']:,} abstracts, a document by its best chunk: naive / late "
             "chunking / no chunking",
             f"{r['naive_chunks']['ndcg@10']:.4f} / {r['late_chunks']['ndcg@10']:.4f} / {r['no_chunking']['ndcg@10']:.4f}",
             name)]


def _scale(d: dict, name: str):
    pages = d["what"].split("first ", 1)[1].split(" pages", 1)[0]
    return [(f"12-build sweep on the first {pages} pages of uber_2021.pdf: one process vs local Ray, 2 workers (identical rows: "
             f"{'yes' if d['identical_rows'] else 'NO'})",
             f"{d['seconds']['one_process']:.0f} s vs {d['seconds']['ray_2_workers']:.0f} s", name)]


def _golden(d: dict, name: str):
    w = d["written"]
    return [(f"write_golden with {d['model'].split(' ')[0]} on uber_2021.pdf: kept of asked", f"{w['kept']} of {w['asked']}",
             name)]


def _golden_checked(d: dict, name: str):
    """The run at the top of the file, and what a person found reading its kept drafts."""
    w, hand = d["written"], d.get("checked_by_hand") or {}
    drafts = hand.get("drafts", [])
    sound = [(x.get("reference_right"), x.get("a_person_would_ask_it")) for x in drafts
             if x.get("answerable_from_the_page") is True and x.get("evidence_right") in (True, "partly")]
    right = sum(r is True and q is True for r, q in sound)
    edited = sum({r, q} == {True, "after an edit"} for r, q in sound)
    checked = f"; right when read by hand: {right} of {len(drafts)}, {edited} more after one edit" if drafts else ""
    return [(f"write_golden with {d['model'].split(' ')[0]} on uber_2021.pdf (n={d['n']}): kept of asked{checked}",
             f"{w['kept']} of {w['asked']}", name)]


def _model_chunking(d: dict, name: str):
    of = d["techniques"][0]["of"] if d["techniques"] else 0
    builds = "; ".join(f"{t['name']} {t['found']} / {t['right']}" for t in d["techniques"])
    totals = d.get("writer_totals") or {}
    outcomes = (d.get("answering") or {}).get("outcomes") or {}
    verdicts = sum(outcomes.values())
    unusable = verdicts - outcomes.get("ok", 0)
    model = d["what"].split("; ", 1)[1].split(" (", 1)[0]  # the chat model, as the bench names it
    rows = [(f"compare_chunking with {model} on uber_2021.pdf pages 1-12, {of} questions: found / answered "
             f"right per technique (the judge gave no usable verdict on {unusable} of {verdicts} answers)",
             f"{builds}; {totals.get('requests', '?')} model requests, {d['seconds']:.0f} s", name)]
    if d.get("read_by_hand"):
        hand = d["read_by_hand"]["right"]
        rows.append(("... the same answers read by a person against the golden references: answered right",
                     "; ".join(f"{t['name']} {hand[t['name']]}" for t in d["techniques"]), "same"))
    if d.get("rejudged"):
        again = "; ".join(f"{t['name']} {t['right']}" for t in d["rejudged"]["techniques"])
        rows.append(("... the same answers re-judged with the shipped correctness rubric (--replay): answered right",
                     again, "same"))
    return rows


def _embedders(d: dict, name: str):
    out = []
    for part, what, k in (("tenk", "uber_2021.pdf's {questions} questions by page", "ndcg@10"),
                          ("scifact", "SciFact's {questions} test queries on {abstracts} abstracts", "ndcg@10")):
        r = d.get(part) or {}
        if "difference_mpnet_minus_minilm" not in r:
            continue
        diff, rates = r["difference_mpnet_minus_minilm"][k], [r["embedders"][s]["passages_per_s"] for s in ("default", "mpnet")]
        out.append((f"all-MiniLM-L6-v2 (int8) vs all-mpnet-base-v2 on the same chunks, {what.format(**r)}: {k}; "
                    "mpnet minus MiniLM [95% paired bootstrap]; passages/s"
                    + (f" (this part on {r['cpu']})" if r.get("cpu") else ""),
                    f"{r['default'][k]:.3f} vs {r['mpnet'][k]:.3f}; {diff['mean']:+.3f} [{diff['ci95'][0]:+.3f}, "
                    f"{diff['ci95'][1]:+.3f}]; {rates[0]:.1f} vs {rates[1]:.2f}", name))
    return out


def _compare_embedders(d: dict, name: str):
    """compare_embedders_bench.py: each candidate's nDCG@k and its embedding time as a ratio to the
    int8 default's, measured in the same run; the verdict."""
    rows, k = d["candidates"], d["comparison"]["k"][-1]
    base = next((r["embed_s_per_1k_chunks"] for r in rows if r["name"] == "all-MiniLM-L6-v2@int8"), None)
    cells = "; ".join(f"{r['name']} {r['ndcg']:.3f}" + (f" ({r['embed_s_per_1k_chunks'] / base:.1f}x)" if base else "")
                      for r in rows)
    best = d["comparison"]["best"]
    data = Path(d["data"]["pdf"]).name if d["data"].get("pdf") else "SciFact"
    return [(f"compare_embedders on {data} ({d['comparison']['questions']} questions by "
             f"{d['comparison']['by']}, {d['data']['chunks']:,} chunks): nDCG@{k} per candidate, leader first (embedding "
             "time per chunk as a ratio to the int8 default's, same run); best",
             cells + f"; {'best: ' + best['name'] if best else 'no best (none told apart from the leader)'}", name)]


def _hnsw(d: dict, name: str):
    out = []
    for r in d["results"]:
        s, h = r["settings"], r["hnsw"]
        out.append((f"HNSW at {r['vectors']:,} vectors of 384 dims (connectivity {s['connectivity']}, expansion_search "
                    f"{s['expansion_search']}, vectors in {s['dtype']}): recall@10 against exact; p50 HNSW / exact; build",
                    f"{h['recall@10']:.4f}; {_ms(h['p50_ms'])} / {_ms(r['exact']['p50_ms'])} ms; {r['build_s']:.0f} s", name))
    return out


def _hnsw_rule(d: dict, name: str):
    """The breadth the rule gives each size, then the verdict (scripts/hnsw_rule.check) on every
    graph of the file that is the store's own."""
    m = d["machine"]
    out = []
    if "rule" in d:
        out.append(("HNSW breadth rule (connectivity 64): the smallest expansion_search with recall@10 >= 0.99 by index size",
                    ", ".join(f"{int(n):,}: {r['breadth']} ({r['recall@10']:.4f})" for n, r in d["rule"]["breadth_by_size"].items()),
                    name))
    for size in d["sizes"]:
        for g in size["graphs"]:
            if "check" not in g:
                continue
            c = g["check"]
            faiss = c["faiss_at_the_store_recall"]
            out.append((f"HNSW, the store's graph (connectivity {g['connectivity']}, expansion_add {g['expansion_add']}, "
                        f"vectors in {d.get('usearch_dtype', 'f32')}) at "
                        f"{size['vectors']:,} vectors, searched at the store's breadth: recall@10; p50 the store / raw usearch "
                        "at that breadth / faiss at that recall; build CPU usearch / faiss; the rule (recall >= 0.99, p50 "
                        f"<= 2x raw usearch's, build <= 2x faiss's) ({m['cpu']}, {m['cores']} cores{_kernels(m, g)})",
                        f"{c['store']['recall@10']:.4f} at {c['store_breadth']}; {_ms(c['store']['p50_ms'])} / "
                        f"{_ms(c['raw_usearch_p50_ms'])} / "
                        f"{_ms(faiss['p50_ms']) if faiss else 'none reached it'} ms; {c['build_cpu_usearch_to_faiss']:.2f}x; "
                        f"{'met' if c['met'] else 'not met: ' + c['why']}", name if not out else "same"))
    return out


def _kernels(machine: dict, graph: dict) -> str:
    """", limited to usearch's haswell and faiss's AVX2 kernels" when the run hid the CPU's better ones
    (scripts/hnsw_rule.py --faiss-simd and scripts/nk_mask.c), else nothing."""
    if not machine.get("kernels_limited"):
        return ""
    return f", limited to usearch's {graph['usearch_kernels']} and faiss's {graph['faiss_simd']} kernels"


def _where(d: dict) -> str:
    """The CPU a bench file records (scripts/_bench.machine_cpu), as "name (flags)"."""
    cpu = str(d.get("cpu", "")).split(",")
    return f"{cpu[0]} ({', '.join(c.strip() for c in cpu[2:]) or 'flags not recorded'})" if d.get("cpu") else "CPU not recorded"


def _embedder(d: dict) -> str:
    """"int8" / "fp32" for the bundled model as a bench file names it."""
    name = str(d.get("embedder") or "")
    return "int8 MiniLM" if "@int8" in name else "fp32 MiniLM" if name.endswith("all-MiniLM-L6-v2") else name or "?"


def _compare_chunking(d: dict, name: str):
    """The 36-build comparison: wall time, chunks and texts, and its ratios to the floor (the same model on each
    distinct text once) and to one plain fp32 encode, each measured in the same run (a run before the floor
    was measured says so)."""
    floor = f"{d['ratio_to_floor']:.2f}x" if d.get("ratio_to_floor") else "floor not measured"
    return [(f"the default equal-budget chunking comparison, 36 builds on uber_2021.pdf, {_embedder(d)} ({_int8_path(d)}) "
             f"on {_where(d)}: wall time (target {d['target_seconds']} s); chunks made / distinct texts / texts embedded "
             "(the rest found in the cache); over the floor (the same model embedding each distinct text once; target "
             "<= 1.5x); over one plain fp32 encode of the same texts",
             f"{d['comparison_seconds']:.0f} s; {d['chunks_made']:,} / {d['distinct_texts']:,} / {d['texts_embedded']:,}; "
             f"{floor}; {d['ratio']:.2f}x", name)]


def _int8_path(d: dict) -> str:
    """Whether a bench file's int8 run had the CPU's int8 dot-product instructions (its embedding_path)."""
    path = str(d.get("embedding_path") or "")
    return "int8 instructions used" if "with this CPU's int8" in path else \
        "no int8 instructions" if "without them" in path else "embedding path not recorded"


def _tenk(d: dict, name: str):
    return [(f"uber_2021.pdf (307 pages) to a first report, `vectrixdb add` then `report --by page` from a cold cache, "
             f"{_embedder(d)} on {_where(d)}: wall time (target {d['target_s']} s); of it reading / embedding",
             f"{d['total_s']:.1f} s; {d['where_the_add_goes_s']['reading']:.1f} / "
             f"{d['where_the_add_goes_s']['embedding']:.0f} s", name)]


def _cli(d: dict, name: str):
    r, t = d["results"], d["targets"]
    return [(f"a fresh `vectrixdb` process on {_where(d)}, medians of {len(r['help']['each_s'])}: `--help` / `search` with a new "
             f"query, int8 MiniLM / the same, fp32 (targets {t['help_s']} s, {t['search_s']} s)",
             f"{r['help']['median_s']:.2f} / {r['search_new_query_default']['median_s']:.2f} / "
             f"{r['search_new_query_fp32']['median_s']:.1f} s", name)]


def _quantized(d: dict, name: str):
    r = d["results"]
    backends = [k for k in r if k != "plain"]
    where = _where(d)
    calibrated = "int8 calibrated on SciFact itself" if "first 512 abstracts" in d.get("how", "") else \
        "int8 calibrated on the shipped set"
    return [(f"embedding SciFact abstracts on {where}, {' / '.join(backends)} against plain encode ({calibrated}): "
             "speed-up in passages/s (nDCG@10 change" + (" [95% paired bootstrap over queries]" if any(
                 r[k].get("ndcg@10_change_ci95") for k in backends) else "") + ")",
             "; ".join(f"{r[k]['speedup_vs_plain']:.2f}x ({0.0 - r[k]['ndcg@10_loss']:+.4f}" + (
                 " [{:+.4f}, {:+.4f}]".format(*r[k]["ndcg@10_change_ci95"]) if r[k].get("ndcg@10_change_ci95") else "")
                       + ")" for k in backends), name)]


def _boilerplate(d: dict, name: str):
    lab, at = d["labelled"], d["by_share"][str(d["default_share"])]
    critic = lab.get("passage_critic_qwen1.5b_mean_auc")
    rows = [("write_golden's boilerplate rule (no model) on 16 hand-labelled passages of uber_2021.pdf: AUC of its "
             "share" + (" (the 1.5B passage critic's mean score)" if critic is not None else ""),
             f"{lab['auc_of_share']:.3f}" + (f" ({critic:.2f})" if critic is not None else ""), name)]
    if "uber_2021.pdf" in at:
        u, ly = at["uber_2021.pdf"], at["lyft_2021.pdf"]
        rows.append((f"... chunks it skips at share {d['default_share']}: uber_2021.pdf / lyft_2021.pdf; chunks holding a "
                     "hand-written question's evidence among them",
                     f"{u['boilerplate']} of {u['chunks']} / {ly['boilerplate']} of {ly['chunks']}; "
                     f"{len(u['evidence_chunks_skipped'])} of {u['evidence_chunks']}", "same"))
    return rows


def _judge(d: dict, name: str):
    model = d["model"]
    out = []
    for metric, row in d["per_metric"].items():
        bar = d["lexical_on_the_same_cases"][metric]
        low, high = bar["kappa_minus_lexical_ci95"]
        out.append((f"{metric} judge ({model}) against a person, {row['scored']} held-out cases of data/judge_set: "
                    "kappa; minus the lexical bar's, 95% paired bootstrap",
                    f"{row['kappa']:.2f}; {bar['kappa_minus_lexical']:+.2f} [{low:+.2f}, {high:+.2f}] "
                    f"({bar['kappa_verdict']})", name if not out else "same"))
    return out


def _parallel_local(d: dict, name: str):
    slots = next(k for k in d["write_golden"] if k.endswith("_at_once"))
    runs = [(f"write_golden(n={d['what'].split('n=')[1].split(')')[0]})", d["write_golden"]),
            ("compare_chunking(chat=)", d["comparison"])]
    return [(f"model calls {slots.split('_')[0]} at once vs one at a time, SmolLM2-135M behind llama.cpp's server with "
             f"parallel slots on {_where(d)}: {' / '.join(label for label, _ in runs)} wall time one at a time vs at "
             "once (speed-up); outputs identical",
             " / ".join(f"{r['serial']['seconds']:.0f} vs {r[slots]['seconds']:.0f} s ({r['speedup']:.2f}x); "
                        f"{'yes' if all(r['identical'].values()) else 'no'}" for _, r in runs), name)]


def _suggest(d: dict, name: str):
    u, f = d["uber_2021"], d["scifact_train"]
    r, sci = u["results"], f["results"]
    return [(f"suggest_expected on uber_2021's {u['rows']} page-labelled questions, k=3: a right page proposed, by "
             "question+reference joined (the default) / question / reference / both fused, hybrid (dense)",
             " / ".join(f"{r[s + '/hybrid']['found']} ({r[s + '/dense']['found']})"
                        for s in ("joined", "question", "reference", "both")) + f" of {u['rows']}", name),
            (f"suggest_expected on SciFact's {f['rows']} train claims (no reference answers), k=3: a right abstract "
             "proposed, hybrid / dense", f"{sci['question/hybrid']['found']} / {sci['question/dense']['found']}", "same")]


def _search_load(d: dict, name: str):
    """Dense search's p50 / p95 with the matrix product on one BLAS thread against BLAS's default
    threads, measured in turns in one run, per neighbour."""
    out = []
    for load in dict.fromkeys(r["load"] for r in d["rows"]):
        one, many = (next(r for r in d["rows"] if (r["mode"], r["load"], r["blas"]) == ("dense", load, blas))
                     for blas in ("one thread", "default threads"))
        busy = "" if load == "idle" else f" ({d['busy_processes']} busy processes)"
        out.append((f"exact dense search, {d['chunks']:,} vectors, {load}{busy} on {_where(d)}: "
                    "p50 / p95, one BLAS thread (vectrixdb's) vs BLAS's default threads",
                    f"{_ms(one['p50_ms'])} / {_ms(one['p95_ms'])} ms vs {_ms(many['p50_ms'])} / {_ms(many['p95_ms'])} ms",
                    name if not out else "same"))
    return out


def _default_mode(d: dict, name: str):
    cells = {data: " / ".join(f"{got['modes'][m]['ndcg@10']:.3f}" for m in ("dense", "keyword", "hybrid"))
             for data, got in d["data_sets"].items()}
    def change(data: str, other: str) -> str:
        c = d["data_sets"][data]["hybrid_change"][f"hybrid - {other}"]
        return f"{c['ndcg@10']:+.3f} [{c['95% CI'][0]:+.3f}, {c['95% CI'][1]:+.3f}]"

    return [("the default search mode (best nDCG@10 on both data sets): dense / keyword / hybrid on SciFact (by "
             "document) and uber_2021 (by page); hybrid - dense, hybrid - keyword, each with its 95% interval",
             "; ".join(f"{data} {cells[data]}, {change(data, 'dense')}, {change(data, 'keyword')}" for data in cells)
             + f"; default {d['vectrixdb_default']}", name)]


OPTIONAL = [("late_chunking_scifact.json", _late), ("scale_local_vs_ray.json", _scale),
            ("write_golden_uber.json", _golden), ("write_golden_uber_qwen1.5b.json", _golden_checked),
            ("boilerplate_passages.json", _boilerplate), ("judge_calibration_qwen1.5b.json", _judge),
            ("model_chunking_uber.json", _model_chunking), ("model_chunking_uber_qwen1.5b.json", _model_chunking),
            ("embedders_scifact_10k.json", _embedders), ("compare_embedders_uber.json", _compare_embedders),
            ("compare_embedders_scifact.json", _compare_embedders), ("compare_embedders_uber_pypdf.json", _compare_embedders),
            ("hnsw.json", _hnsw), ("hnsw_rule.json", _hnsw_rule), ("hnsw_rule_1m.json", _hnsw_rule), ("hnsw_rule_100k_amd.json", _hnsw_rule),
            ("hnsw_rule_1m_bf16.json", _hnsw_rule), ("hnsw_rule_bf16.json", _hnsw_rule),
            ("hnsw_rule_bf16_avx2.json", _hnsw_rule), ("hnsw_rule_1m_bf16_avx2.json", _hnsw_rule), ("tenk_to_report.json", _tenk), ("tenk_to_report_pypdf.json", _tenk),
            ("tenk_to_report_xeon.json", _tenk),
            ("cli_cold.json", _cli), ("cli_cold_xeon.json", _cli),
            ("quantized_embedding.json", _quantized),
            ("quantized_embedding_xeon.json", _quantized), ("parallel_local_smollm2.json", _parallel_local),
            ("suggest_expected.json", _suggest), ("search_under_load.json", _search_load),
            ("default_mode.json", _default_mode),
            ("compare_chunking_uber_pypdf.json", _compare_chunking), ("compare_chunking_uber_xeon.json", _compare_chunking)]


def _coverage_row(d: dict) -> tuple[str, str, str]:
    """The lowest simulated coverage at n >= 30 of the shipped 95% intervals, beside what they replaced."""
    low = lambda part, name: d[part]["summary"][name]["lowest_at_n>=30"]  # noqa: E731
    return ("95% intervals, lowest coverage at n >= 30 in simulation (ppi_coverage.py): ppi_mean / ppi_py's; "
            "report intervals (Wilson for 0/1, studentized bootstrap) / the percentile bootstrap they replace",
            f"{low('ppi', 'ppi'):.3f} / {low('ppi', 'ppi_py'):.3f}; {low('bootstrap', 'shipped'):.3f} / "
            f"{low('bootstrap', 'percentile_bootstrap'):.3f}", "ppi_coverage.json")


def table() -> str:
    lines = ["| what | figure | file |", "|---|---|---|"]
    lines += [f"| {what} | {figure} | {file} |" for what, figure, file in rows()]
    return "\n".join(lines)


def main() -> int:
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
