"""Search modes, reciprocal rank fusion and optional reranking; the ranked Hit records they return."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.roles import Reranker

MODES = ("dense", "keyword", "hybrid")
SCORE_KINDS = {"dense": "cosine", "keyword": "bm25", "hybrid": "rrf"}  # what a hit's score is, by mode
RRF_K = 60  # Cormack, Clarke & Buettcher (2009): score = sum over rankings of 1 / (60 + rank)
# Hybrid search fuses a dense and a keyword pool of this fixed depth whatever k is, so search(q, k)
# is the first k of search(q, K) for every K > k (a pool that grew with k changed the fused top
# results). Measured on SciFact test, nDCG@10 at depth 30 / 100 / 300 / 1000: 0.6868 / 0.6802 /
# 0.6837 / 0.6859 (benchmarks/answer_cutoff_scifact_minilm.json, hybrid_pool_trials): within
# 0.007 of each other; 300 covers retrieval_report's usual depth (100) with room and stays near
# the HNSW search breadth (256), where 1,000 would widen every large dense search fourfold.
HYBRID_POOL = 300
RERANK_DEPTH = 50  # a reranker re-scores the first max(k, RERANK_DEPTH) hits of the mode's ranking


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    doc_id: str
    pages: tuple[int, ...]
    text: str
    score: float
    rank: int
    headings: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    relevance: float | None = None  # the reranker's score, when one ran
    score_kind: str = "cosine"  # what `score` is: cosine (dense), bm25 (keyword), rrf (hybrid) or rerank

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def check_query(query: Any, k: Any, mode: str) -> None:
    """A BadInput naming what is wrong with a search's query, k or mode; nothing when all are fine."""
    from vectrixdb.errors import BadInput

    if not isinstance(query, str) or not query.strip():
        raise BadInput(f"query must be non-empty text, not {query!r}")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(f"query holds a lone surrogate ({query[exc.start]!r} at character {exc.start}), "
                       "which is not valid Unicode text") from None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise BadInput(f"k must be a positive whole number, not {k!r}")
    if mode not in MODES:
        raise BadInput(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")


def fuse(rankings: Sequence[Iterable[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of ranked key lists: (key, fused score) best first; ties by key."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[int(key)] = scores.get(int(key), 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


_RERANKERS: dict[str, Any] = {}


def get_reranker(rerank: Reranker) -> Callable[[str, list[str]], np.ndarray]:
    """A function (query, texts) -> scores from a cross-encoder name or folder, a loaded
    CrossEncoder (anything with .predict(pairs)), or such a function itself."""
    if callable(rerank) and not hasattr(rerank, "predict"):
        scorer = rerank
        return lambda q, texts: np.asarray(scorer(q, texts), dtype=float)
    if isinstance(rerank, str):
        if rerank not in _RERANKERS:
            from sentence_transformers import CrossEncoder

            try:
                _RERANKERS[rerank] = CrossEncoder(rerank, device="cpu")
            except Exception as exc:
                raise BadInput(
                    f"cannot load reranker {rerank!r} ({type(exc).__name__}: {exc}). No cross-encoder is bundled: "
                    "pass a local folder, or a model name with a network, or leave rerank out."
                ) from exc
        rerank = _RERANKERS[rerank]
    if hasattr(rerank, "predict"):
        model = rerank
        return lambda q, texts: np.asarray(model.predict([(q, t) for t in texts], show_progress_bar=False), dtype=float)
    raise BadInput(f"rerank must be a cross-encoder name, folder, model or function, not {rerank!r}")
