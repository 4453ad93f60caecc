"""The built-in report kinds, each one declaration (evaluation/runs/kinds.py says what every field means).

The order of registration is the order of the dashboard's Type filter (kinds.badges()). The
headline rules here are what every listing, the CLI, the run page and the certificate show:
set figures carry the k they were read at (`page_f1@10`: set F1 over the first 10 results; its
best is below 1 when k exceeds the expected items, so certify.py shows it and does not grade it).
`units` names each kind's columns and figures that are not 0..1 scores (times, counts, ranks):
read from the tables each kind saves (retrieval_report's per-question latency_ms, expected_n and
first_right; evaluate's setup latencies; a sweep's build and search times; counts of builds,
pairs and pooled results); every other numeric column of theirs is a score.
"""
from __future__ import annotations

import re
from typing import Any

from vectrixdb import plotting
from vectrixdb.plotting import studies
from vectrixdb.plotting.audit import audit_plot
from vectrixdb.evaluation.runs.headlines import best_text, standard_headline
from vectrixdb.evaluation.runs.kinds import KINDS, Kind, Plot, register
from vectrixdb.evaluation.runs.power_formulas import power_at

__all__ = ["best_text", "standard_headline", "score_heatmap", "power_headline", "pool_headline",
           "ppi_headline", "embedders_headline", "best_figures", "setup_figures", "capped_recall", "build_shares", "evaluation_words"]


def score_heatmap(report):
    """The per-question heatmap of the run's scores, leaving out the columns its kind gives a unit."""
    from vectrixdb.plotting.heatmap import question_heatmap

    kind = KINDS[report.kind]
    return question_heatmap(report, skip=tuple(c for c in report.frame.columns if kind.unit_of(c)))


HEATMAP = Plot("Per-question heatmap", "scores per question, run {run_id}", score_heatmap,
               lambda report: report.frame is not None and len(report.frame) > 0)
TIES = Plot("Tie matrix", "exact McNemar p-values between techniques, run {run_id}", plotting.tie_matrix,
            lambda report: len(report.get("techniques") or []) > 1)  # one technique: nothing to compare, no figure


def power_figure(report, ax=None):
    """questions_needed's figure: plotting.studies draws the power curves with power_formulas.power_at."""
    return studies.power_plot(report, ax, power_at=power_at)


def power_headline(values: dict) -> dict[str, Any]:
    """A power study adds `detectable <measure>` for its first 4 measures."""
    out = standard_headline(values)
    if isinstance(values.get("detectable"), dict) and "questions_for" in values:
        for measure, d in list(values["detectable"].items())[:4]:
            out[f"detectable {measure}"] = d
    return out


def pool_headline(values: dict) -> dict[str, Any]:
    """A pool adds `pooled`: the unjudged results it gathered."""
    out = standard_headline(values)
    if "pooled" in values and "first_found" in values:
        out["pooled"] = values["pooled"]
    return out


def ppi_headline(values: dict) -> dict[str, Any]:
    """A PPI report adds `<metric> (PPI)`, its estimate, with its interval's ends."""
    out = standard_headline(values)
    if "width_ratio" in values and "estimate" in values:
        metric = values.get("metric") or "mean verdict"
        given = values.get("ci")
        ci = given if isinstance(given, list) and len(given) == 2 else [None, None]
        out.update({f"{metric} (PPI)": values["estimate"], "PPI low": ci[0], "PPI high": ci[1]})
    return out


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def setup_figures(report) -> dict[str, float]:
    """An `evaluate` run's certificate figures: its best setup's nDCG@k, recall@k and MRR (at its depth)."""
    values, best = dict(report), report.get("best")
    if not isinstance(best, dict):
        return {}
    return {(f"mrr@{values['depth']}" if k == "mrr" and values.get("depth") else k): float(v)
            for k, v in best.items() if _number(v) and re.fullmatch(r"(ndcg|recall)@\d+|mrr", k)}


def capped_recall(report) -> dict[str, float]:
    """`<level>_capped_recall@k` of a run_evaluation run: per question, the expected items its k
    results matched / min(k, expected items) (at most 1), averaged over the questions that expect
    something at that level. Its ceiling is 1 at every k, unlike set recall (k / R when R > k)."""
    frame, k = report.frame, report.get("k")
    if frame is None or not isinstance(k, int) or k < 1:
        return {}
    out = {}
    for level in ("doc", "page", "chunk"):
        if f"{level} expected" not in frame or f"{level} matched" not in frame:
            continue
        shares = [min(1.0, len(set(got)) / min(k, len(want))) for want, got in
                  zip(frame[f"{level} expected"], frame[f"{level} matched"])
                  if isinstance(want, list) and want and isinstance(got, list)]
        if shares:
            out[f"{level}_capped_recall@{k}"] = sum(shares) / len(shares)
    return out


def build_shares(report) -> dict[str, float]:
    """A chunking comparison's best build: its found share, and its right share when decided by answers."""
    best = report.get("best")
    if not (isinstance(best, dict) and best.get("of")):
        return {}
    out = {"found_share": best["found"] / best["of"]}
    if report.get("decided_by") == "answered right":
        out["right_share"] = best["right"] / best["of"]
    return out


def evaluation_words(values: dict) -> str:
    return f"a {values['type']} evaluation" if values.get("type") else "this evaluation"


def embedders_headline(values: dict) -> dict[str, Any]:
    """An embedder comparison (retrieval/embedders_compare.py): `best` in words (or why there is none), the leader's nDCG@k and the number of candidates."""
    quality = values.get("quality") or "ndcg"
    rows = values.get("candidates") or []
    out: dict[str, Any] = {}
    best = values.get("best")
    if isinstance(best, dict):
        out["best"] = f"{best['name']} ({quality} {best.get(quality, 0):.3f})"
    elif rows:
        out["best"] = ("none: one candidate" if len(rows) == 1 else
                       f"none: {values.get('leader')} not told apart from {', '.join(values.get('tied') or [])}")
    if rows:
        out[quality] = rows[0].get("ndcg")
        out["candidates"] = len(rows)
    if values.get("by"):
        out["by"] = values["by"]
    return out


def best_figures(report) -> dict[str, float]:
    """The certificate's figures: the leader's nDCG@k, recall@k and MRR (at the depth)."""
    rows = report.get("candidates") or []
    if not rows:
        return {}
    k, lead = report["k"][-1], rows[0]
    got = {f"ndcg@{k}": lead.get("ndcg"), f"recall@{k}": lead.get("recall"), f"mrr@{report.get('depth')}": lead.get("mrr")}
    return {name: float(v) for name, v in got.items() if isinstance(v, (int, float)) and v == v}


EMBEDDER_UNITS = {"dim": "count", "embed_s_per_1k_chunks": "s", "chunks_embedded": "count", "chunks_from_cache": "count",
                  "query_p50_ms": "ms", "query_p95_ms": "ms", "index_bytes": "bytes", "cost_per_1k_chunks": "$",
                  "cost_per_1k_queries": "$", "questions_needed": "questions", "candidates": "count"}


def _builtins() -> None:
    p = plotting  # the kinds' own figures (vectrixdb/plotting: imports matplotlib only when drawing)
    for kind in (
        Kind("evaluation", "evaluations", p.evaluation_plot, badges=("Retrieval", "Generation", "RAG"),
             badge_from="type", figures=capped_recall, what=evaluation_words, plots=(HEATMAP,),
             comparable=True,
             progress="vectrixdb.evaluation.runs.pipeline"),
        Kind("retrieval", "retrieval", p.recall_curve, badges=("Retrieval",), what="a retrieval report",
             plots=(HEATMAP,), tab="retrieval", comparable=True,
             units={"latency_ms": "ms", "expected_n": "count", "first_right": "rank"}),
        Kind("evaluate", "retrieval", p.setup_comparison, questions=None, badges=("Retrieval",),
             figures=setup_figures, what="a setup comparison", tab="retrieval",
             units={"median_ms": "ms", "p95_ms": "ms"}),
        Kind("cutoff", "retrieval", p.cutoff_plot, ("candidates",), badges=("Retrieval",),
             what="a cut-off study", tab="retrieval", comparable=True),
        Kind("sweep", "sweeps", p.sweep_plot, questions=None, badges=("Chunking",), what="a chunking sweep",
             units={"median_search_ms": "ms", "build_s": "s", "chunks": "count", "chunk_size": "chars"}),
        Kind("chunking", "chunking", p.chunking_plot, ("outcomes",), questions="outcomes", badges=("Chunking",),
             figures=build_shares, what="a chunking comparison", plots=(TIES,), tab="chunking", comparable=True,
             units={"chunks": "count", "chunk_size": "chars", "found": "count", "right": "count", "scored": "count",
                    "unscored": "count"}, optional=("right", "scored", "unscored")),  # builds: report.schema.json
        Kind("answers", "evaluations", p.answers_plot, badges=("Generation",), what="an answer evaluation",
             comparable=True),
        Kind("calibration", "evaluations", p.calibration_plot, badges=("Generation",),
             what="a judge calibration", comparable=True),
        Kind("experiment", "experiments", p.experiment_plot, ("changed",), questions=None,
             badges=("Experiment",), what="an experiment", graded=False,
             saved_comparison=True, units={"wins": "count", "losses": "count", "ties": "count", "paired": "count"}),
        Kind("power", "experiments", power_figure, questions=None, badges=("Power",),
             headline=power_headline, units={"n": "questions", "questions for": "questions"}),  # questions_needed
        Kind("pool", "retrieval", studies.pool_plot, questions=None, badges=("Pool",),
             headline=pool_headline, units={"runs": "count", "best_rank": "rank", "pooled": "count"}),  # pooling.pool
        Kind("ppi", "evaluations", studies.ppi_plot, questions=None, badges=("PPI",),
             headline=ppi_headline, units={"N": "count", "n": "count"}),  # ppi_mean
        Kind("embedders", "retrieval", studies.embedders_plot, ("outcomes",), questions="outcomes", badges=("Retrieval",),
             headline=embedders_headline, figures=best_figures,
             what="an embedder comparison", graded=False, units=EMBEDDER_UNITS),  # retrieval/embedders_compare.py
        Kind("golden_audit", "audits", audit_plot, badges=("Audit",),
             what="a golden-set audit", units={"keyword_rank": "rank", "dense_rank": "rank", "words": "words"}),
    ):
        if kind.name not in KINDS:
            register(kind)


_builtins()
