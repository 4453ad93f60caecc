"""The `vectrixdb` command (pyproject's entry point `vectrixdb.cli:app`; `python -m vectrixdb.cli`).

    commands.py  the app, its error handler and exit codes, and the store and golden commands
    evaluate.py  report, evaluate (CI gates with --fail-under) and runs
    golden.py    golden import / export (ragas, DeepEval, Vecta)
    write.py     golden write / golden audit
    serve.py     serve (the dashboard) and export (PDF, offline HTML)
    writer.py    writer check (is the chat model there?)
    paths.py     file arguments that are glob patterns: expanded, or `no file matches PATTERN`

A new command group: a module here with `register(app, open_collection)` (or a Typer app), and one
line in commands.py's `_register_more`. The CLI sits on top: it may import anything; nothing else
imports it (tests/test_layout.py checks).
"""
from __future__ import annotations

__all__ = ["app", "main"]


def __getattr__(name: str):
    if name in __all__:  # the entry point `vectrixdb.cli:app` (pyproject.toml) loads the commands here
        from vectrixdb.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'vectrixdb.cli' has no attribute {name!r}")
