"""One family of errors: everything vectrixdb raises on purpose is a VectrixError.

Each kind also derives from the built-in exception a caller would already catch (ValueError for bad
input, FileNotFoundError for something missing, ...), so `except ValueError` keeps working while
`except VectrixError` catches them all. The CLI prints a VectrixError as one line and exits with
its kind's status (vectrixdb.cli.commands.EXIT_CODES); anything else is a bug and keeps its traceback.
tests/test_errors.py walks every raise in the package: a built-in raised in a public code path fails.
"""
from __future__ import annotations


class VectrixError(Exception):
    """Base of every error vectrixdb raises on purpose (a user's error, not a bug)."""


class BadInput(VectrixError, ValueError):
    """An argument, file or row that is not what it should be; the message names it."""


class BadType(BadInput, TypeError):
    """An argument of a kind the call cannot take (also a TypeError, as Python raises for it)."""


class ChecksumMismatch(BadInput):
    """A file whose SHA-256 is not the one it should have (ir_datasets' HashVerificationError):
    `expected` and `actual` are both kept and shown, so a person can tell a modified copy from a
    truncated download."""

    def __init__(self, what: str, expected: str, actual: str, hint: str = ""):
        super().__init__(f"{what}: its sha256 does not match\n  expected {expected}\n  actual   {actual}"
                         + (f"\n{hint}" if hint else ""))
        self.what, self.expected, self.actual = what, expected, actual


class NotFound(VectrixError, FileNotFoundError):
    """A collection, document, file or run that is not there."""


class AlreadyExists(VectrixError, FileExistsError):
    """A file a person may have edited: it is never written over."""


class IOFailure(VectrixError, OSError):
    """A file or folder that could not be written or read for a reason outside the library (a full
    disk, no permission, a read-only folder); the message names the path and why. `errno` is the
    operating system's error number, when it gave one."""


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


class MissingExtra(VectrixError, ImportError):
    """An optional dependency a call needs is not installed; the message names the pip extra."""
