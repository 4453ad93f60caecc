"""One family of errors: everything vectrixdb raises on purpose is a VectrixError.

Each kind also derives from the built-in exception a caller would already catch (ValueError for bad
input, FileNotFoundError for something missing, ...), so `except ValueError` keeps working while
`except VectrixError` catches them all. The CLI prints a VectrixError as one line and exits 1;
anything else is a bug and keeps its traceback.
"""
from __future__ import annotations


class VectrixError(Exception):
    """Base of every error vectrixdb raises on purpose (a user's error, not a bug)."""


class BadInput(VectrixError, ValueError):
    """An argument, file or row that is not what it should be; the message names it."""


class NotFound(VectrixError, FileNotFoundError):
    """A collection, document, file or run that is not there."""


class AlreadyExists(VectrixError, FileExistsError):
    """A file a person may have edited: it is never written over."""


class Corrupt(VectrixError, RuntimeError):
    """A file the library owns is damaged and cannot be healed from anything else."""


class Refused(VectrixError, RuntimeError):
    """A service (a chat model, an object store) said no; `said` holds what it answered."""

    def __init__(self, message: str, *, said: str | None = None, status: int | None = None):
        super().__init__(message)
        self.said = said
        self.status = status


class Unsupported(VectrixError, ValueError):
    """Something asked of a part that cannot do it (a file type, a model that pools otherwise)."""
