"""Keyword search with bm25s (Lucene's BM25 variant, k1=1.5, b=0.75), English stop words removed.

The index is derived from the catalog: it is rebuilt when the catalog's generation moves on and
saved stamped with that generation, so the next process loads it instead of rebuilding.
No stemmer by default: on SciFact that reproduces the published bm25s figure (nDCG@10 0.66).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np


def tokenize(texts: list[str], stemmer=None):
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)


class KeywordIndex:
    def __init__(self, folder: Path):
        self.folder = folder / "keywords"
        self.generation = -1
        self.model = None
        self.keys = np.zeros(0, np.uint64)

    def load(self, generation: int, rebuild) -> None:
        import bm25s

        if self.generation == generation:
            return
        try:
            stamp = json.loads((self.folder / "stamp.json").read_text())
        except (OSError, ValueError):
            stamp = {}
        if stamp.get("generation") == generation:
            self.model = bm25s.BM25.load(str(self.folder / "bm25"))
            self.keys = np.load(self.folder / "keys.npy")
        else:
            keys, texts = rebuild()
            self.keys = np.array(keys, dtype=np.uint64)
            self.model = None
            if texts:
                self.model = bm25s.BM25()
                self.model.index(tokenize(texts), show_progress=False)
            self._save(generation)
        self.generation = generation

    def _save(self, generation: int) -> None:
        tmp = self.folder.with_name("keywords.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if self.model is not None:
            self.model.save(str(tmp / "bm25"))
        np.save(tmp / "keys.npy", self.keys)
        (tmp / "stamp.json").write_text(json.dumps({"generation": generation if self.model is not None else -1}))
        shutil.rmtree(self.folder, ignore_errors=True)
        tmp.rename(self.folder)

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(keys, BM25 scores) best first; documents sharing no term with the query are left out."""
        if self.model is None or k <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        import bm25s

        words = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        known = [w for w in words if w in self.model.vocab_dict]
        if not known:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        scores = self.model.get_scores(known)
        if allowed is not None:
            mask = np.isin(self.keys, allowed)
            scores = np.where(mask, scores, 0.0)
        nonzero = np.flatnonzero(scores > 0)
        if len(nonzero) == 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        top = nonzero[np.argsort(-scores[nonzero], kind="stable")[:k]]
        return self.keys[top], scores[top].astype(np.float32)
