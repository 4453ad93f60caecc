"""Late chunking: each chunk's vector is the mean of its own tokens, read in the whole document.

Günther et al. (Jina AI, 2024): run the transformer over the whole document first, so every token
embedding has seen its context, and only then pool each chunk's tokens. It needs a model that
pools the mean of its tokens (all-MiniLM-L6-v2, the bundled model, does); a model that pools its
first token (CLS) has no per-chunk mean to take, so it is refused with that reason.

Documents longer than the model's maximum length are read in overlapping windows of
`max_seq_length` tokens (special tokens included), each starting `stride` tokens after the one
before (half a window by default). A token's embedding is taken from the window where it sits
furthest from either edge, so every token keeps at least a quarter window of context on each side
wherever the document allows. A chunk's vector is the mean of the embeddings of the tokens whose
characters fall inside the chunk's span (a token cut by a span edge belongs to the chunk holding
its first character), L2-normalised. Vectors go through nothing else: no cache, since a chunk's
late vector depends on the whole document, not on its own text.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from vectrixdb.errors import Unsupported


def pooling_of(model: Any) -> str:
    """The pooling mode of a sentence-transformers model ("mean", "cls", ...)."""
    for module in model:
        mode = getattr(module, "pooling_mode", None)
        if mode is not None:
            return str(mode)
        if getattr(module, "pooling_mode_mean_tokens", False):
            return "mean"
    return "unknown"


def check_late(embedder: Any) -> None:
    """Unsupported with the reason when this embedder cannot do late chunking."""
    model = getattr(embedder, "model", None)
    if model is None or not hasattr(model, "__iter__"):
        raise Unsupported(f"late chunking needs a sentence-transformers model's token embeddings; "
                          f"{getattr(embedder, 'name', embedder)!r} does not expose them")
    mode = pooling_of(model)
    if mode != "mean":
        raise Unsupported(f"late chunking takes each chunk's mean token embedding, and {embedder.name!r} pools "
                          f"{mode!r}, not the mean of its tokens: its vectors would not be what it was trained to give")


def token_embeddings(model: Any, text: str, stride: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings [tokens, dim], character offsets [tokens, 2]) of `text`'s tokens, special tokens
    left out, read in overlapping windows when the text is longer than the model's maximum length."""
    import torch

    transformer = model[0]
    tokenizer, network = transformer.tokenizer, transformer.auto_model
    width = int(transformer.max_seq_length) - 2  # room for [CLS] and [SEP]
    stride = stride or max(1, width // 2)
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    ids, offsets = encoded["input_ids"], np.array(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    n = len(ids)
    dim = network.config.hidden_size
    out, best = np.zeros((n, dim), dtype=np.float32), np.full(n, -1)
    starts = list(range(0, max(n - width, 0) + 1, stride))
    if starts[-1] + width < n:
        starts.append(n - width)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    with torch.no_grad():
        for a in starts:
            window = ids[a: a + width]
            tensor = torch.tensor([[cls, *window, sep]])
            hidden = network(input_ids=tensor, attention_mask=torch.ones_like(tensor)).last_hidden_state[0, 1:-1]
            for i in range(len(window)):  # keep the window where the token is furthest from an edge
                margin = min(i, len(window) - 1 - i)
                if margin > best[a + i]:
                    best[a + i] = margin
                    out[a + i] = hidden[i].numpy()
    return out, offsets


def late_vectors(embedder: Any, text: str, spans: Sequence[tuple[int, int]], stride: int | None = None) -> np.ndarray:
    """One unit vector per (start, end) span of `text`: the mean of its tokens read in the whole text."""
    check_late(embedder)
    if not spans:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    tokens, offsets = token_embeddings(embedder.model, text, stride)
    first = offsets[:, 0]
    vectors = np.zeros((len(spans), tokens.shape[1]), dtype=np.float32)
    for row, (start, end) in enumerate(spans):
        inside = (first >= start) & (first < end) & (offsets[:, 1] > offsets[:, 0])
        if not inside.any():  # a span too short to hold a token's start: the token it falls in
            inside = (offsets[:, 0] <= start) & (offsets[:, 1] > start)
        mean = tokens[inside].mean(axis=0) if inside.any() else np.zeros(tokens.shape[1], dtype=np.float32)
        norm = np.linalg.norm(mean)
        vectors[row] = mean / norm if norm > 0 else mean
    return vectors
