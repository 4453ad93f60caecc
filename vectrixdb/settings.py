"""Settings as values: the checks every config dataclass runs when it is made, and keywords that moved.

A long signature keeps its most used keywords and groups the rest in small frozen dataclasses
(ChatWriter's RequestConfig and LimitConfig, compare_chunking's CompareConfig, write_golden's
WritingConfig), the shape of DeepEval's synthesizer configs. Each config checks its fields in
`__post_init__`, so a bad value fails where it is written, naming `Config.field`, not later in a
run. A keyword that moved into a config is refused with where it went (`moved`), so an old script
fails with a useful message instead of silently running with the default.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from vectrixdb.errors import BadInput, BadType

F = TypeVar("F", bound=Callable[..., Any])


def moved(call: str, where: Mapping[str, str]) -> Callable[[F], F]:
    """Refuse the keywords `where` names with where each went (`where[old]`, e.g.
    "request=RequestConfig(temperature=...)"), as BadType (a TypeError, as Python raises for an
    unknown keyword). The wrapped function keeps its signature (inspect.signature follows it)."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            old = [name for name in kwargs if name in where]
            if old:
                raise BadType("; ".join(f"{call}({name}=) moved: pass {where[name]}" for name in old))
            return fn(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return wrap


def unit(owner: str, name: str, value: Any) -> None:
    """A number from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise BadInput(f"{owner}.{name} is a number from 0 to 1, not {value!r}")


def whole(owner: str, name: str, value: Any, least: int, *, optional: bool = False) -> None:
    """A whole number from `least` (or None when optional)."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise BadInput(f"{owner}.{name} is a whole number from {least}{' or None' if optional else ''}, not {value!r}")


def number(owner: str, name: str, value: Any, low: float, high: float | None = None, *,
           optional: bool = False, above: bool = False) -> None:
    """A number from low (above it when `above`) up to high (no bound when None), or None when optional."""
    if optional and value is None:
        return
    fits = not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value) \
        and (value > low if above else value >= low) and (high is None or value <= high)
    if not fits:
        span = f"{'above' if above else 'from'} {low:g}" + (f" to {high:g}" if high is not None else "")
        raise BadInput(f"{owner}.{name} is a number {span}{' or None' if optional else ''}, not {value!r}")


def one_of(owner: str, name: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise BadInput(f"{owner}.{name} is one of {', '.join(map(repr, choices))}, not {value!r}")


def kind(owner: str, name: str, value: Any, types: type | tuple, what: str, *, optional: bool = False) -> None:
    """An instance of types (`what` says which in words), or None when optional."""
    if optional and value is None:
        return
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise BadType(f"{owner}.{name} is {what}, not {value!r}")
    if not isinstance(value, types):
        raise BadType(f"{owner}.{name} is {what}, not {type(value).__name__}")


def frozen_mapping(owner: str, name: str, value: Any) -> Mapping | None:
    """A read-only copy of a mapping (None stays None), so a frozen config cannot change under a run."""
    if value is None:
        return None
    kind(owner, name, value, Mapping, "a mapping (dict)")
    return MappingProxyType(dict(value))
