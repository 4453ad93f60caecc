"""One chunking build: a technique at a size, its chunks' spans and texts per collection (and their
vectors, when not embedded from the texts). compare.py makes the plain builds and models.py the
model-backed ones; both hand back this record, which sits below both.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Build:
    technique: str
    size: int
    heading: bool
    spans: dict[str, list[tuple[int, int, int]]]  # collection -> (doc index, start, end) handed per chunk
    texts: dict[str, list[str]]  # collection -> what the embedder sees per chunk
    chunks: int = 0
    vectors: dict | None = None  # collection -> one vector per chunk, when not embedded from texts (late chunking)

    @property
    def label(self) -> str:
        """How reports name the build: technique/size/heading or plain."""
        return f"{self.technique}/{self.size}/{'heading' if self.heading else 'plain'}"
