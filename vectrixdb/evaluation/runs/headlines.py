"""The standard headline rule: a run's headline figures by name, what every listing, the CLI, the run
page and the certificate show for a kind that declares no headline of its own (Kind.headline's
default). Set figures carry the k they were read at (`page_f1@10`)."""
from __future__ import annotations

from typing import Any


def standard_headline(values: dict) -> dict[str, Any]:
    """A run's headline figures by name: the grain (`by`), set F1 per level at the run's largest k,
    accuracy and groundedness, recall and nDCG at the largest cut-off, MRR (at its depth), and
    `best` in words (an `evaluate` run's best setup with its nDCG, a comparison's best build)."""
    out: dict[str, Any] = {"by": values.get("by")} if values.get("by") else {}
    levels = values.get("levels") or {}
    k = values.get("k")
    k = k[-1] if isinstance(k, list) and k else k
    at = f"@{k}" if isinstance(k, int) and not isinstance(k, bool) and k > 0 else ""  # a damaged k (False) names none
    for level in ("chunk", "page", "doc"):
        if isinstance(levels.get(level), dict):
            out[f"{level}_f1{at}"] = levels[level].get("f1")
    for metric in ("accuracy", "groundedness"):
        if isinstance(values.get("metrics"), dict) and metric in values["metrics"]:
            out[metric] = values["metrics"][metric]
    for family in ("recall", "ndcg"):
        got = values.get(family)
        if isinstance(got, dict) and got:
            last = max(got, key=lambda x: int(x))
            out[f"{family}@{last}"] = got[last]
    if values.get("mrr") is not None:
        out[f"mrr@{values.get('depth')}" if values.get("depth") else "mrr"] = values["mrr"]
    if values.get("best") is not None:
        out["best"] = best_text(values["best"]) if isinstance(values["best"], dict) else values["best"]
    return out


def best_text(best: dict) -> str:
    """The best setup or build in words: an `evaluate` run's `hybrid · default · - (ndcg@10 0.682,
    412 ms median)`, a sweep's `recursive 400 (ndcg@3 0.710)`, a chunking comparison's
    `recursive 400 (31/40 found)`."""
    if "mode" in best:
        name = " · ".join(str(best.get(k) or "-") for k in ("mode", "vectors", "rerank"))
    else:
        name = " ".join(str(best[k]) for k in ("name", "chunk", "chunk_size") if best.get(k) is not None) or "best"
    quality = next((k for k in best if k.startswith("ndcg@") and not k.endswith((" low", " high"))), None)
    figures = [f"{quality} {best[quality]:.3f}"] if quality and isinstance(best.get(quality), (int, float)) else []
    if isinstance(best.get("median_ms"), (int, float)):
        figures.append(f"{best['median_ms']:.0f} ms median")
    if best.get("of"):
        figures.append(f"{best.get('found')}/{best['of']} found")
    return name + (f" ({', '.join(figures)})" if figures else "")
