"""The identity of a user's function a cell runs, for the cell's key (executors.Cell).

code_digest (executors.py) covers every function inside the vectrixdb package. A function that
lives outside it (a chunker registered from your own module or a notebook cell, a cell function of
your own) is keyed here by the code that runs, so editing it and re-registering it recomputes the
cells it computed instead of handing back what the old code kept in cells.sqlite.

The rule (code_identity):
- a function of the vectrixdb package: its qualified name (its code is in code_digest);
- any other Python function: its module and qualified name and a SHA-256 of its code object
  (bytecode, constants, names, argument layout, nested functions, lambdas and comprehensions),
  its defaults, the values its closure holds, and, followed the same way, every function and
  class of its own module it names as a global (a helper in the same file or notebook) and the
  simple constants (numbers, strings, tuples of them) of that module it names. Line numbers and
  file names are not part of it, so moving a function, re-running the notebook cell that holds it
  unchanged or editing a comment does not recompute (a changed docstring does: it is a constant).
  The code object is read, not the file: a module edited on disk but not reloaded still runs the
  old code, and is still keyed as the old code (keying the file as it reads now would keep the old
  code's results under the new code's key);
- functools.partial: its function and the repr of its arguments; a bound method: its function
  and its class; a callable object: its class's `__call__`.

Limits, each said by a warning once per process (never silently): a function without Python code
(a builtin, a C extension's function) is keyed by its qualified name only, so an edit to it is not
noticed; a bound method or callable object is keyed by its code, not by the state of its instance.
Not followed at all: helpers in *other* modules (import a changed helper module's reload, or
keep the helper in the chunker's module), attributes read at run time, files the function reads.
"""
from __future__ import annotations

import functools
import hashlib
import types
import warnings
from typing import Any, Callable

PACKAGE = "vectrixdb"
SIMPLE = (int, float, complex, str, bytes, bool, type(None))
_warned: set[str] = set()


def qualified(fn: Any) -> str:
    if isinstance(fn, functools.partial):
        return f"partial({qualified(fn.func)})"
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def in_package(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return isinstance(module, str) and module.split(".")[0] == PACKAGE


def code_identity(fn: Callable[..., Any]) -> str:
    """`module.qualname` for a function of the package, else `module.qualname#<sha256>` (see the
    module doc for what the digest covers and its limits)."""
    name = qualified(fn)
    if isinstance(fn, types.FunctionType) and in_package(fn):
        return name
    h = hashlib.sha256()
    _feed(h, fn, set())
    return f"{name}#{h.hexdigest()}"


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _feed(h: Any, fn: Any, seen: set[int]) -> None:
    """Add what `fn` runs to the hash `h`; `seen` stops cycles (a function naming itself)."""
    if id(fn) in seen:
        h.update(b"<seen>" + qualified(fn).encode())
        return
    seen.add(id(fn))
    if isinstance(fn, functools.partial):
        h.update(b"partial" + repr((fn.args, sorted(fn.keywords.items()))).encode())
        _feed(h, fn.func, seen)
    elif isinstance(fn, types.MethodType):
        _state_warning(fn.__func__, type(fn.__self__))
        h.update(b"method of " + qualified(type(fn.__self__)).encode())
        _feed(h, fn.__func__, seen)
    elif isinstance(fn, types.FunctionType):
        _function(h, fn, seen)
    elif isinstance(fn, type):
        _class(h, fn, seen)
    elif isinstance(_call_of(type(fn)), types.FunctionType):
        _state_warning(_call_of(type(fn)), type(fn))
        h.update(b"instance of ")
        _feed(h, type(fn), seen)
    else:  # a builtin, a C function or an object whose call is not Python code
        _opaque(h, fn)


def _call_of(cls: type) -> Any:
    """The `__call__` a class defines or inherits (looked up in its MRO, as a call finds it)."""
    return next((vars(c)["__call__"] for c in cls.__mro__ if "__call__" in vars(c)), None)


def _opaque(h: Any, fn: Any) -> None:
    _warn_once(qualified(fn), f"{qualified(fn)} has no Python code to read (a builtin or C function): cells that "
                              "run it are keyed by its name only, so an edit to it will not be noticed (cells.sqlite "
                              "hands back what it computed before)")
    h.update(b"opaque " + qualified(fn).encode())


def _state_warning(fn: Any, cls: type) -> None:
    if not in_package(fn):
        _warn_once(qualified(cls), f"{qualified(cls)}: cells that call this object are keyed by its class's code, "
                                   "not by its instance's attributes; a changed attribute will not be noticed")


def _function(h: Any, fn: types.FunctionType, seen: set[int]) -> None:
    if in_package(fn):  # reached from user code: code_digest covers it
        h.update(b"package " + qualified(fn).encode())
        return
    h.update(b"function " + qualified(fn).encode())
    _code(h, fn.__code__)
    h.update(repr(fn.__defaults__).encode() + repr(sorted((fn.__kwdefaults__ or {}).items())).encode())
    for cell in fn.__closure__ or ():
        try:
            _value(h, cell.cell_contents, fn.__module__, seen)
        except ValueError:  # an empty cell (a name assigned after the inner function was made)
            h.update(b"<empty cell>")
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None:
        _feed(h, wrapped, seen)
    for name in sorted(_global_names(fn.__code__)):
        if name in fn.__globals__:
            value = fn.__globals__[name]
            if isinstance(value, SIMPLE + (tuple, frozenset)) or getattr(value, "__module__", None) == fn.__module__:
                h.update(b"global " + name.encode())
                _value(h, value, fn.__module__, seen)


def _class(h: Any, cls: type, seen: set[int]) -> None:
    h.update(b"class " + qualified(cls).encode())
    if in_package(cls):
        return
    python = False
    for name, member in sorted(vars(cls).items()):
        inner = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
        if isinstance(inner, types.FunctionType):
            python = True
            h.update(b"member " + name.encode())
            _feed(h, inner, seen)
        elif isinstance(inner, SIMPLE):
            h.update(f"member {name}={inner!r}".encode())
    if not python:  # a builtin or C type: nothing of its code can be read
        _opaque(h, cls)


def _value(h: Any, value: Any, module: str, seen: set[int]) -> None:
    """A global or closure value: functions and classes of the same module are followed, simple
    constants are taken by value, anything else by its type's name."""
    if isinstance(value, SIMPLE):
        h.update(f"{type(value).__name__}:{value!r}".encode())
    elif isinstance(value, (tuple, frozenset)):
        items = [_const(x) for x in value]
        h.update(repr(sorted(items) if isinstance(value, frozenset) else items).encode())
    elif isinstance(value, (types.FunctionType, type, functools.partial)) and (
            getattr(value, "__module__", None) == module or isinstance(value, functools.partial)):
        _feed(h, value, seen)
    else:
        h.update(b"value of " + qualified(type(value)).encode())


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _code(h: Any, code: types.CodeType) -> None:
    """Bytecode and what it reads, nested code objects recursively; no line numbers or file name."""
    h.update(code.co_code)
    h.update(repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
                   code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    h.update(getattr(code, "co_exceptiontable", b""))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            h.update(b"code " + const.co_qualname.encode() if hasattr(const, "co_qualname") else b"code")
            _code(h, const)
        else:
            h.update(_const(const).encode())


def _const(value: Any) -> str:
    """A constant as text that does not depend on the process (a frozenset's order does)."""
    if isinstance(value, frozenset):
        return "frozenset" + repr(sorted(_const(x) for x in value))
    if isinstance(value, tuple):
        return "tuple" + repr([_const(x) for x in value])
    return f"{type(value).__name__}:{value!r}"
