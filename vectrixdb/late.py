"""Late chunking: each chunk's vector is the mean of its own tokens, read in the whole document.

Günther et al. (Jina AI, 2024): run the transformer over the whole document first, so every token
embedding has seen its context, and only then pool each chunk's tokens. It needs a model that
pools the mean of its tokens (all-MiniLM-L6-v2, the bundled model, does); a model that pools its
first token (CLS) has no per-chunk mean to take, so it is refused with that reason.

Documents longer than the model's maximum length are read in overlapping windows of
`max_seq_length` tokens (special tokens included), each starting `stride` tokens after the one
before (half a window by default). A token's embedding is taken from the window where it sits
furthest from either edge, so every token keeps at least a quarter window of context on each side
wherever the document allows. Windows of many documents go through the model together in padded
batches (late_vectors_many). A chunk's vector is the mean of the embeddings of the tokens whose
characters fall inside the chunk's span (a token cut by a span edge belongs to the chunk holding
its first character), L2-normalised. Vectors go through nothing else: no cache, since a chunk's
late vector depends on the whole document, not on its own text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from vectrixdb.errors import Unsupported
from vectrixdb.roles import Embedder
from vectrixdb.extras import needs

if TYPE_CHECKING:
    from vectrixdb.embedding import SentenceEmbedder


def pooling_of(model: Any) -> str:
    """The pooling mode of a sentence-transformers model ("mean", "cls", ...)."""
    for module in model:
        mode = getattr(module, "pooling_mode", None)
        if mode is not None:
            return str(mode)
        if getattr(module, "pooling_mode_mean_tokens", False):
            return "mean"
    return "unknown"


def check_late(embedder: Embedder) -> None:
    """Unsupported with the reason when this embedder cannot do late chunking."""
    if getattr(embedder, "backend", None):  # an OpenVINO graph (the int8 default) gives sentence vectors only
        raise Unsupported(f"late chunking needs the torch model's token embeddings; {embedder.name!r} runs on "
                          "OpenVINO and gives sentence vectors only: use model='all-MiniLM-L6-v2@fp32'")
    model = getattr(embedder, "model", None)
    if model is None or not hasattr(model, "__iter__"):
        raise Unsupported(f"late chunking needs a sentence-transformers model's token embeddings; "
                          f"{getattr(embedder, 'name', embedder)!r} does not expose them")
    mode = pooling_of(model)
    if mode != "mean":
        raise Unsupported(f"late chunking takes each chunk's mean token embedding, and {embedder.name!r} pools "
                          f"{mode!r}, not the mean of its tokens: its vectors would not be what it was trained to give")


GROUP = 256  # documents whose token embeddings are held at once


def _starts(n: int, width: int, stride: int) -> list[int]:
    """Where each window of `width` tokens begins so that `n` tokens are all covered."""
    starts = list(range(0, max(n - width, 0) + 1, stride))
    if starts[-1] + width < n:
        starts.append(n - width)
    return starts


def token_embeddings_many(model: Any, texts: Sequence[str], stride: int | None = None, batch_size: int = 32,
                          progress: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each text, (embeddings [tokens, dim], character offsets [tokens, 2]) of its tokens, special
    tokens left out. Every text's windows go through the model together, in padded batches of
    `batch_size` windows sorted by length (the attention mask keeps padding out of every token)."""
    with needs("store"):
        import torch
    from tqdm.auto import tqdm

    transformer = model[0]
    tokenizer, network = transformer.tokenizer, transformer.auto_model
    width = int(transformer.max_seq_length) - 2  # room for [CLS] and [SEP]
    stride = stride or max(1, width // 2)
    dim = network.config.hidden_size
    outs, bests, offsets, jobs = [], [], [], []
    for t, text in enumerate(texts):
        # verbose=False: the whole text is tokenised on purpose (the windows below keep the model within
        # its length), so transformers' "longer than the maximum sequence length" warning would mislead
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                            verbose=False)
        ids = encoded["input_ids"]
        offsets.append(np.array(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2))
        outs.append(np.zeros((len(ids), dim), dtype=np.float32))
        bests.append(np.full(len(ids), -1))
        jobs += [(t, a, ids[a: a + width]) for a in _starts(len(ids), width, stride)]
    jobs.sort(key=lambda job: -len(job[2]))
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id or 0
    bar = tqdm(total=len(jobs), desc=f"late chunking {len(texts):,} documents ({len(jobs):,} windows)",
               unit="window", disable=not progress)
    with torch.no_grad():
        for b in range(0, len(jobs), batch_size):
            batch = jobs[b: b + batch_size]
            longest = len(batch[0][2]) + 2
            ids = torch.full((len(batch), longest), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, (_, _, window) in enumerate(batch):
                ids[row, : len(window) + 2] = torch.tensor([cls, *window, sep])
                mask[row, : len(window) + 2] = 1
            hidden = network(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
            for row, (t, a, window) in enumerate(batch):
                size = len(window)
                here = np.arange(size)
                margin = np.minimum(here, size - 1 - here)  # keep the window where a token is furthest from an edge
                better = margin > bests[t][a: a + size]
                outs[t][a: a + size][better] = hidden[row, 1: 1 + size][better]
                bests[t][a: a + size][better] = margin[better]
            bar.update(len(batch))
    bar.close()
    return list(zip(outs, offsets))


def token_embeddings(model: Any, text: str, stride: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings [tokens, dim], character offsets [tokens, 2]) of `text`'s tokens, special tokens
    left out, read in overlapping windows when the text is longer than the model's maximum length."""
    return token_embeddings_many(model, [text], stride)[0]


def late_vectors_many(embedder: SentenceEmbedder, items: Sequence[tuple[str, Sequence[tuple[int, int]]]],
                      stride: int | None = None, batch_size: int = 32, progress: bool = False) -> list[np.ndarray]:
    """For each (text, spans): one unit vector per (start, end) span, the mean of its tokens read in
    the whole text. The texts' windows are batched together, GROUP documents at a time, so the token
    embeddings held at once stay bounded (a few hundred MB) however many documents there are."""
    from tqdm.auto import tqdm

    check_late(embedder)
    items = list(items)
    out: list[np.ndarray] = []
    with tqdm(total=len(items), desc="late chunking", unit="doc", disable=not progress) as bar:
        for g in range(0, len(items), GROUP):
            group = items[g: g + GROUP]
            read = token_embeddings_many(embedder.model, [text for text, _ in group], stride, batch_size)
            out += [_pool(tokens, offsets, spans, embedder.dim) for (tokens, offsets), (_, spans) in zip(read, group)]
            bar.update(len(group))
    return out


def late_vectors(embedder: SentenceEmbedder, text: str, spans: Sequence[tuple[int, int]], stride: int | None = None) -> np.ndarray:
    """One unit vector per (start, end) span of `text`: the mean of its tokens read in the whole text."""
    check_late(embedder)
    if not spans:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return late_vectors_many(embedder, [(text, spans)], stride)[0]


def _pool(tokens: np.ndarray, offsets: np.ndarray, spans: Sequence[tuple[int, int]], dim: int) -> np.ndarray:
    first = offsets[:, 0]
    vectors = np.zeros((len(spans), dim), dtype=np.float32)
    for row, (start, end) in enumerate(spans):
        inside = (first >= start) & (first < end) & (offsets[:, 1] > offsets[:, 0])
        if not inside.any():  # a span too short to hold a token's start: the token it falls in
            inside = (offsets[:, 0] <= start) & (offsets[:, 1] > start)
        mean = tokens[inside].mean(axis=0) if inside.any() else np.zeros(dim, dtype=np.float32)
        norm = np.linalg.norm(mean)
        vectors[row] = mean / norm if norm > 0 else mean
    return vectors
