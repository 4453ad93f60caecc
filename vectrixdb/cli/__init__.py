"""placeholder"""
from __future__ import annotations

__all__ = ["app", "main"]


def __getattr__(name: str):
    if name in __all__:  # the entry point `vectrixdb.cli:app` (pyproject.toml) loads the commands here
        from vectrixdb.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'vectrixdb.cli' has no attribute {name!r}")
