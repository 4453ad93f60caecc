"""Search modes over a collection: dense, keyword and hybrid rankings, reciprocal rank fusion,
optional reranking, metadata and principal filters, and the ranked Hit records they return.

Vectrix.search and Vectrix.similar (collection.py) are one-line doors to search() and similar()
here; the collection hands itself in as `db` (its catalog, indexes and embedders). A new search
mode is a branch of search()'s `fetch` plus its name in MODES and SCORE_KINDS.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, cast

import numpy as np

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.store import DEFAULT_SPACE
from vectrixdb.store.vectors import search_breadth
from vectrixdb.roles import Reranker
from vectrixdb.extras import needs

MODES = ("dense", "keyword", "hybrid")
# What search, a report and the CLI use when no mode is given: the best nDCG@10 on both published data
# sets (benchmarks/default_mode.json, int8 MiniLM): above dense by +0.036 [0.008, 0.064] on SciFact and
# +0.143 [0.048, 0.255] on uber_2021's page labels; above keyword by +0.022 and +0.007, within the
# noise of those questions. A cut-off (answer_cutoff) needs comparable scores and says dense itself.
DEFAULT_MODE = "hybrid"
SCORE_KINDS = {"dense": "cosine", "keyword": "bm25", "hybrid": "rrf"}  # what a hit's score is, by mode
RRF_K = 60  # Cormack, Clarke & Buettcher (2009): score = sum over rankings of 1 / (60 + rank)
# Hybrid search fuses a dense and a keyword pool of this fixed depth whatever k is, so search(q, k)
# is the first k of search(q, K) for every K > k (a pool that grew with k changed the fused top
# results). Measured on SciFact test, nDCG@10 at depth 30 / 100 / 300 / 1000: 0.6868 / 0.6802 /
# 0.6837 / 0.6859 (benchmarks/answer_cutoff_scifact_minilm.json, hybrid_pool_trials): within
# 0.007 of each other; 300 covers retrieval_report's usual depth (100) with room and stays near
# the HNSW search breadth (256), where 1,000 would widen every large dense search fourfold.
HYBRID_POOL = 300
SEARCH_DEPTH = 64  # dense and keyword rankings are read this deep at least (see first_depth), then twice as deep, ...
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
    """A function (query, texts) -> scores from a cross-encoder name or folder, a served reranker's
    model string (`http://host:8080/v1#model`: vectrixdb.served.RerankRoute, one per string in a
    process), a loaded CrossEncoder (anything with .predict(pairs)), or such a function itself."""
    from vectrixdb.served.wire import is_served

    if is_served(rerank):
        from vectrixdb.served.rerank import RerankRoute

        rerank = RerankRoute.named(cast(str, rerank))
    if isinstance(rerank, str) and rerank in registry.names("rerankers"):
        return get_reranker(registry.get("rerankers", rerank)())  # a registered reranker by its name
    if callable(rerank) and not hasattr(rerank, "predict"):
        scorer = rerank
        return lambda q, texts: np.asarray(scorer(q, texts), dtype=float)
    if isinstance(rerank, str):
        if rerank not in _RERANKERS:
            with needs("store"):
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


@registry.contract("rerankers")
def _fits(name: str, make: Any) -> None:
    if not callable(make):
        raise BadInput(f"reranker {name!r}: a reranker is make(model=None) -> scorer(query, texts) -> scores, "
                       f"not {type(make).__name__}")


def cross_encoder(model: str | None = None) -> Callable[[str, list[str]], np.ndarray]:
    """The "cross-encoder" reranker: a sentence-transformers CrossEncoder by name or folder, loaded
    once per process (rerank="cross-encoder/ms-marco-MiniLM-L-6-v2" reaches it without its name)."""
    if not model:
        raise BadInput("the cross-encoder reranker needs a model: a name or folder, e.g. "
                       "rerank='cross-encoder/ms-marco-MiniLM-L-6-v2'")
    return get_reranker(model)


registry.register("rerankers", "cross-encoder", cross_encoder)


def first_depth(need: int) -> int:
    """Where a dense or keyword search starts reading: the first of SEARCH_DEPTH, twice it, ... that
    reaches `need`, but no deeper than the HNSW graph's smallest breadth. Every read up to that
    breadth is a prefix of the one list the graph returns for it (as exact and keyword rankings are
    at any depth), so starting there gives the same hits as reading 64, 128, ... in turn, in fewer
    rounds; past it a deeper read may order the first places differently, so those are read first."""
    depth = SEARCH_DEPTH
    while depth < need and depth * 2 <= search_breadth(0):
        depth *= 2
    return depth


def doc_of(chunk_id: str) -> str:
    """The document id inside a chunk id (`<doc_id>::<n>`, as the catalog writes them)."""
    return chunk_id.rsplit("::", 1)[0]


def search(db, query: str, k: int = 10, *, mode: str = DEFAULT_MODE, rerank: Reranker | bool | None = None,
           vectors: str | None = None, where: dict | None = None, principal: dict | None = None) -> list[Hit]:
    """Vectrix.search for `db`, a Vectrix (its docstring states the rule): the mode's one ranking read
    deeper until k hits are found or every candidate is seen, then optionally reranked."""
    check_query(query, k, mode)
    reranking = rerank not in (None, False)
    need = -(-k // RERANK_DEPTH) * RERANK_DEPTH if reranking else k
    # None in keyword mode, which never reads it
    vector: Any = db.embedder(vectors or DEFAULT_SPACE).encode([query])[0] if mode != "keyword" else None

    def ranked() -> list[Hit]:  # the mode's one ranking, read deeper until enough; at one catalog state
        allowed = allowed_keys(db, where, principal)

        def fetch(depth: int) -> tuple[list, list, bool]:  # (keys, scores, whether more lie deeper)
            if mode == "hybrid":
                dense, _ = dense_ranking(db, vector, depth, vectors, allowed)
                sparse, _ = keywords_for(db, principal).search(query, depth, allowed)
                fused = fuse([dense, sparse])
                return [k_ for k_, _ in fused], [s for _, s in fused], max(len(dense), len(sparse)) == depth
            if mode == "dense":
                keys, scores = dense_ranking(db, vector, depth, vectors, allowed)
            else:
                keys, scores = keywords_for(db, principal).search(query, depth, allowed)
            return [int(k_) for k_ in keys], list(scores), len(keys) == depth

        order: dict[int, float] = {}  # the ranking as far as it has been read
        depth = HYBRID_POOL if mode == "hybrid" else first_depth(need)
        while True:
            keys, scores, more = fetch(depth)
            for key, score in zip(keys, scores):
                order.setdefault(key, score)
            found = hits_of(db, np.array(list(order), np.uint64), np.array(list(order.values())), need,
                            SCORE_KINDS[mode])
            if len(found) == need or not more:  # enough, or every candidate seen
                return found
            depth *= 2

    hits = db._at_one_state(ranked)
    if reranking and hits:
        score = get_reranker(cast("Reranker", rerank))  # neither None nor False: `reranking` says so
        relevance = np.concatenate([score(query, [h.text for h in hits[i:i + RERANK_DEPTH]])
                                    for i in range(0, len(hits), RERANK_DEPTH)])
        block = np.arange(len(hits)) // RERANK_DEPTH  # each block of 50 re-scored, the blocks kept in order
        order_ = np.lexsort((np.arange(len(hits)), -relevance, block))[:k]
        hits = [Hit(**{**hits[i].to_dict(), "rank": r, "score": float(relevance[i]), "score_kind": "rerank",
                       "relevance": float(relevance[i])})
                for r, i in enumerate(order_, start=1)]
    return hits


def similar(db, text_or_chunk_id: str, k: int = 10, *, vectors: str | None = None, where: dict | None = None,
            principal: dict | None = None) -> list[Hit]:
    """Vectrix.similar for `db` (its docstring says how a chunk id a principal may not see is taken)."""
    check_query(text_or_chunk_id, k, "dense")
    space = vectors or DEFAULT_SPACE
    encoded: list = []  # the text's vector, made once however often the read below starts again

    def ranked() -> list[Hit]:
        own = db.catalog.key_of(text_or_chunk_id)
        if own is not None and principal is not None:
            seen = allowed_keys(db, {"doc_id": doc_of(text_or_chunk_id)}, principal)  # never None for a principal
            if seen is not None and not len(seen):
                own = None
        index = db._vector_index(space)
        query = index.vector(own) if own is not None else None
        if query is None:
            if not encoded:
                encoded.append(db.embedder(space).encode([text_or_chunk_id])[0])
            query = encoded[0]
        allowed = allowed_keys(db, where, principal)
        keys, scores = dense_ranking(db, query, max(k * 3, k + 20) + 1, space, allowed)
        keep = keys != own if own is not None else np.ones(len(keys), bool)
        return hits_of(db, keys[keep], scores[keep], k)

    return db._at_one_state(ranked)


def keywords_for(db, principal: dict | None):
    """The BM25 index a principal searches: statistics (IDF, average length) over what it may
    see, so scores say nothing about hidden documents. Kept per (catalog state, visible chunks)."""
    from vectrixdb.policy import VisibleKeywords

    if principal is None:
        return db._keyword_index()
    state = db.catalog.state()  # read first: a later write can only make the entry newer, never older
    allowed = allowed_keys(db, None, principal)
    assert allowed is not None  # a principal always narrows what a search may return
    if len(allowed) == db.catalog.counts()["chunks"]:  # it sees everything: the shared index is right
        return db._keyword_index()
    token = (state, hashlib.sha256(allowed.tobytes()).hexdigest())
    if token not in db._visible_keywords:
        keys, texts = db.catalog.chunk_texts()
        keep = np.isin(np.asarray(keys, dtype=np.uint64), allowed)
        index = VisibleKeywords([k for k, ok in zip(keys, keep) if ok], [t for t, ok in zip(texts, keep) if ok])
        if len(db._visible_keywords) >= 8:  # a few principals at a time; drop the oldest
            db._visible_keywords.pop(next(iter(db._visible_keywords)))
        db._visible_keywords[token] = index
    return db._visible_keywords[token]


def dense_ranking(db, query: np.ndarray, k: int, space: str | None, allowed) -> tuple[np.ndarray, np.ndarray]:
    """The first k chunk keys and cosine scores of the vector space `space` (the default space when None)."""
    return db._vector_index(space or DEFAULT_SPACE).search(query, k, allowed)


def allowed_keys(db, where: dict | None, principal: dict | None) -> np.ndarray | None:
    """Sorted keys of the chunks a search may return (None: all of them)."""
    from vectrixdb.policy import check_where, matches, visible

    where = check_where(where)
    if not where and principal is None:
        return None
    ids = [d["doc_id"] for d in db.documents() if matches(d, where) and visible(d["access"], principal)]
    return db.catalog.keys_of_documents(ids)


def hits_of(db, keys: np.ndarray, scores: np.ndarray, k: int, score_kind: str = "cosine") -> list[Hit]:
    """The first k hits of a ranking of chunk keys; the catalog is read a window at a time, so a
    long ranking costs only the rows the k hits need (plus those skipped)."""
    hits: list[Hit] = []
    seen_parents: set = set()
    doc_pages: dict[str, list[dict]] = {}
    window = k + 20
    for at in range(0, len(keys), window):
        rows = db.catalog.chunk_rows(keys[at:at + window])
        for key, score in zip(keys[at:at + window], scores[at:at + window]):
            row = rows.get(int(key))
            if row is None:
                continue
            text, start, end, pages = row["text"], row["start"], row["end"], row["pages"]
            if row["parent"] is not None:  # parent-child: hand back the section, once
                start, end, text = row["parent"]
                if (row["doc_id"], start) in seen_parents:
                    continue
                seen_parents.add((row["doc_id"], start))
                if row["doc_id"] not in doc_pages:  # one catalog read per document, not per hit
                    doc_pages[row["doc_id"]] = db.catalog.pages(row["doc_id"])
                pages = tuple(p["number"] for p in doc_pages[row["doc_id"]] if p["start"] < end and start < p["end"])
            hits.append(Hit(row["chunk_id"], row["doc_id"], pages, text, float(score), len(hits) + 1,
                            row["headings"], start, end, score_kind=score_kind))
            if len(hits) == k:
                return hits
    return hits
