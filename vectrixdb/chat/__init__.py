"""placeholder"""
from __future__ import annotations

__all__ = ["ChatWriter", "Outcome", "passage"]


def __getattr__(name: str):
    if name in __all__:
        from vectrixdb.chat import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'vectrixdb.chat' has no attribute {name!r}")
