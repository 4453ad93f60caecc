"""The identity of a user's function a cell runs, for the cell's key (executors.Cell).

code_digest (executors.py) covers every function inside the vectrixdb package. A function that
lives outside it (a chunker registered from your own module or a notebook cell, a cell function of
your own) is keyed here by the code that runs, so editing it and re-registering it recomputes the
cells it computed instead of handing back what the old code kept in cells.sqlite.

The rule (code_identity): every global a function names is hashed or warned about, never dropped.
- a function or class of the vectrixdb package: its qualified name (its code is in code_digest);
- a function or class of an installed library (a module under the standard library or
  site-packages): its qualified name and the library's version (Python's, for the standard library);
- any other Python function (your module, another of your modules, a notebook): its module and
  qualified name and a SHA-256 of its code object (bytecode, constants, names, argument layout,
  nested functions, lambdas and comprehensions), its defaults, the values its closure holds, and
  every global it names, whichever module that global came from (`from helpers import width` is
  followed like a helper in the same file). A class is followed by its methods and attributes.
- a value (a global, a default, a closure cell, a partial's argument) is hashed by what it holds:
  numbers, strings, bytes, None; tuples, lists, dicts, sets and frozensets of hashable values;
  compiled regexes (pattern and flags); enum members (class, name, value); instances of your own
  classes (their class followed, plus their attributes' values, a dataclass's fields); functions,
  classes and partials as above. A module read as `h.width` is followed by every attribute of it
  whose name the function's code reads (a library's or the package's module: by its name and version).
  A value met again in one walk (a cycle: a function naming itself, a list holding itself; or one
  object under two names) is keyed as a reference to where it was first met, so keying ends and
  `C = A` keys apart from `C = B`. Objects are told apart by id only while the walk holds them
  (`_Walk`): a temporary made for the walk (a tuple of defaults, a dataclass's fields) stays alive
  until the walk ends, so no later object can take its id and be skipped as already keyed.
- functools.partial: its function and its arguments' values; a bound method: its function and its
  instance; a callable object: its class's `__call__` and its attributes.
Line numbers and file names are not part of it, so moving a function, re-running the notebook cell
that holds it unchanged or editing a comment does not recompute (a changed docstring does: it is a
constant). The code object is read, not the file: a module edited on disk but not reloaded still
runs the old code, and is keyed as the old code. Reload every module you edited, the helper module
too (importlib.reload of the chunker's module alone keeps the helper's old code running, and keyed).

Limits, each said by a RuntimeWarning once per process and name (never silently): a function
without Python code (a builtin, a C extension's function) is keyed by its qualified name only; a
value that is none of the above (an open file, a library's object such as a numpy array or a model,
an object holding one) is keyed by its type's name only, and the warning names the global and the
function, so a change to it is not noticed. A value nested more than DEPTH levels deep (a linked
list of 500 nodes: each container, instance or function followed is a level) is keyed the same way,
by what lies above the cut and the cut's type, with the same warning, rather than a RecursionError
out of the key: keying it whole would need a stack as deep as it. Files the function reads are not
part of the key.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import re
import sys
import sysconfig
import types
import warnings
from pathlib import Path
from typing import Any, Callable

PACKAGE = "vectrixdb"
DEPTH = 100  # values nested deeper are keyed by their type, with a warning (the module doc)
SIMPLE = (int, float, complex, str, bytes, bool, type(None))
_warned: set[str] = set()
_LIBRARY_DIRS = tuple({str(Path(p).resolve()) for k, p in sysconfig.get_paths().items()
                       if k in ("stdlib", "platstdlib", "purelib", "platlib")})


class _Unkeyable(Exception):
    """A value with nothing keyable in it (its type's name is in the message)."""


class _Walk:
    """What one key's walk has met: each object by id, held (so no other object can take its id
    while the walk lasts) with the order it was met in, which a second meeting is keyed by; and how
    deep the walk is (DEPTH bounds it)."""

    def __init__(self) -> None:
        self.met: dict[int, tuple[Any, int]] = {}
        self.order: list[int] = []  # ids in the order met, so a set's item can forget what it met
        self.depth = 0

    def again(self, obj: Any) -> bytes | None:
        """A reference to `obj` if the walk met it before (then it is not walked again), else None
        after noting it as met."""
        seen = self.met.get(id(obj))
        if seen is not None:
            return f"<seen {seen[1]}>".encode()
        self.met[id(obj)] = (obj, len(self.order))
        self.order.append(id(obj))
        return None

    def enter(self, obj: Any) -> None:
        """One level deeper, into `obj`; _Unkeyable past DEPTH levels (see the module doc)."""
        if self.depth >= DEPTH:
            raise _Unkeyable(f"a structure nested more than {DEPTH} levels deep (at a {qualified(type(obj))}), "
                             "whose keying would need as deep a stack; give the function a flatter value (a tuple "
                             "of the settings that matter) or a version string to read instead")
        self.depth += 1

    def forget_since(self, mark: int) -> None:
        """Forget what was met after the first `mark` objects (a set's item, keyed on its own)."""
        while len(self.order) > mark:
            del self.met[self.order.pop()]


def qualified(fn: Any) -> str:
    if isinstance(fn, functools.partial):
        return f"partial({qualified(fn.func)})"
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def in_package(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return isinstance(module, str) and module.split(".")[0] == PACKAGE


def library_version(module_name: str | None) -> str | None:
    """The version an installed library's module is keyed by, or None for a module of your own
    (one outside the standard library and site-packages, or with no file: __main__, a notebook)."""
    if not isinstance(module_name, str):  # a function exec'd without a module
        return None
    top = module_name.split(".")[0]
    if top in sys.builtin_module_names or top == "builtins":
        return f"python {sys.version.split()[0]}"
    module = sys.modules.get(module_name) or sys.modules.get(top)
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = str(Path(file).resolve())
    installed = "/site-packages/" in path or "/dist-packages/" in path
    if not installed and not any(path.startswith(d + "/") for d in _LIBRARY_DIRS):
        return None
    if not installed:
        return f"python {sys.version.split()[0]}"
    return f"{top} {getattr(sys.modules.get(top), '__version__', '?')}"


def code_identity(fn: Callable[..., Any]) -> str:
    """`module.qualname` for a function of the package, else `module.qualname#<sha256>` (see the
    module doc for what the digest covers and its limits)."""
    name = qualified(fn)
    if isinstance(fn, types.FunctionType) and in_package(fn):
        return name
    h = hashlib.sha256()
    try:
        _feed(h, fn, _Walk())
    except _Unkeyable as exc:  # past DEPTH along functions alone (wrappers of wrappers): warned, as a value is
        h.update(b"unkeyable " + str(exc).encode())
        _warn_once(name, f"{name} is {exc}: cells that run it are keyed by what lies above the cut only, so a "
                         "change below it will not be noticed (cells.sqlite hands back what it computed before)")
    return f"{name}#{h.hexdigest()}"


def value_identity(value: Any, where: str) -> str:
    """A SHA-256 of what `value` holds (the module doc's rule for values); one that cannot be keyed
    is warned about once, naming `where`."""
    h = hashlib.sha256()
    _held(h, value, where, _Walk())
    return h.hexdigest()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _feed(h: Any, fn: Any, seen: _Walk) -> None:
    """Add what `fn` runs to the hash `h`, one level deeper; `seen` keys a function met before by a
    reference (a function naming itself ends)."""
    seen.enter(fn)
    try:
        _fed(h, fn, seen)
    finally:
        seen.depth -= 1


def _fed(h: Any, fn: Any, seen: _Walk) -> None:
    """_feed's body."""
    if not isinstance(fn, (functools.partial, types.MethodType, types.FunctionType, type)) and \
            isinstance(_call_of(type(fn)), types.FunctionType):
        h.update(b"instance ")  # _value keys it (its class and state) and meets it once
        _held(h, fn, f"the callable object {qualified(type(fn))}", seen)
        return
    again = seen.again(fn)
    if again is not None:
        h.update(again + qualified(fn).encode())
        return
    if isinstance(fn, functools.partial):
        h.update(b"partial")
        _held(h, (fn.args, fn.keywords), f"an argument of {qualified(fn)}", seen)
        _feed(h, fn.func, seen)
    elif isinstance(fn, types.MethodType):
        h.update(b"method of ")
        _held(h, fn.__self__, f"the instance {qualified(fn.__func__)} is bound to", seen)
        _feed(h, fn.__func__, seen)
    elif isinstance(fn, types.FunctionType):
        _function(h, fn, seen)
    elif isinstance(fn, type):
        _class(h, fn, seen)
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


def _held(h: Any, value: Any, where: str, seen: _Walk, names: frozenset[str] = frozenset()) -> None:
    """Hash `value`; one that cannot be keyed is keyed by its type and warned about once, naming `where`."""
    try:
        _value(h, value, seen, names)
    except _Unkeyable as exc:
        h.update(b"unkeyable " + str(exc).encode())
        _warn_once(where, f"{where} is {exc}, which cannot be keyed: cells that run it are keyed by its type only, "
                          "so a change to it will not be noticed (cells.sqlite hands back what it computed before); "
                          "use numbers, strings, tuples/lists/dicts/sets of them, a compiled regex, an enum, or "
                          "an instance of your own class holding those")


def _function(h: Any, fn: types.FunctionType, seen: _Walk) -> None:
    version = None if in_package(fn) else library_version(fn.__module__)
    if in_package(fn) or version:  # the package: code_digest covers it; a library: its version does
        h.update(f"library {qualified(fn)} {version}".encode())
        return
    h.update(b"function " + qualified(fn).encode())
    _code(h, fn.__code__)
    _held(h, (fn.__defaults__, fn.__kwdefaults__), f"a default of {qualified(fn)}", seen)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned after the inner function was made)
            h.update(b"<empty cell>")
            continue
        _held(h, contents, f"{name!r}, which {qualified(fn)} reads from its closure,", seen)
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None:
        _feed(h, wrapped, seen)
    names = frozenset(_global_names(fn.__code__))
    for name in sorted(names):
        if name in fn.__globals__:  # not there: a builtin or an attribute's name
            h.update(b"global " + name.encode())
            _held(h, fn.__globals__[name], f"the global {name!r} of {qualified(fn)}", seen, names)


def _class(h: Any, cls: type, seen: _Walk) -> None:
    h.update(b"class " + qualified(cls).encode())
    version = None if in_package(cls) else library_version(cls.__module__)
    if in_package(cls) or version:
        h.update(f"library {version}".encode())
        return
    if issubclass(cls, enum.Enum):
        h.update(repr([(m.name, _const(m.value)) for m in cls]).encode())
    python = False
    for name, member in sorted(vars(cls).items()):
        inner = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
        if isinstance(inner, types.FunctionType):
            python = True
            h.update(b"member " + name.encode())
            _feed(h, inner, seen)
        elif not (name.startswith("__") and name.endswith("__")) and not issubclass(cls, enum.Enum):
            h.update(b"member " + name.encode())
            _held(h, inner, f"the attribute {name!r} of {qualified(cls)}", seen)
    if not python and not cls.__flags__ & (1 << 9):  # not a heap type: a C type, nothing to read
        _opaque(h, cls)


def _value(h: Any, value: Any, seen: _Walk, names: frozenset[str]) -> None:
    """A value by what it holds (the module doc's list); raises _Unkeyable for anything else, and
    for a value nested more than DEPTH levels deep."""
    if isinstance(value, SIMPLE):
        h.update(f"{type(value).__name__}:{value!r}".encode())
        return
    if isinstance(value, (types.FunctionType, type, functools.partial, types.MethodType,
                          types.BuiltinFunctionType)):
        _feed(h, value, seen)  # meets it itself, a level deeper
        return
    seen.enter(value)
    try:
        _nested(h, value, seen, names)
    finally:
        seen.depth -= 1


def _nested(h: Any, value: Any, seen: _Walk, names: frozenset[str]) -> None:
    """_value for a value that is neither SIMPLE nor a function or class: one level deeper."""
    again = seen.again(value)
    if again is not None:
        h.update(again)
        return
    if isinstance(value, enum.Enum):
        h.update(f"enum {qualified(type(value))}.{value.name}".encode())
        _value(h, value.value, seen, names)
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__name__}[{len(value)}]".encode())
        for item in value:
            _value(h, item, seen, names)
    elif isinstance(value, dict):
        _items(h, value, seen, names)
    elif isinstance(value, (set, frozenset)):
        parts, mark = [], len(seen.order)
        for item in value:  # a set's order depends on the process: each item is keyed on its own, sorted
            one = hashlib.sha256()
            _value(one, item, seen, names)
            seen.forget_since(mark)  # so what one item met does not change how another is keyed
            parts.append(one.hexdigest())
        h.update(f"{type(value).__name__}{sorted(parts)}".encode())
    elif isinstance(value, re.Pattern):
        h.update(f"regex {value.pattern!r} {value.flags}".encode())
    elif isinstance(value, types.ModuleType):
        _module(h, value, seen, names)
    elif library_version(type(value).__module__) is None and not in_package(type(value)) and (
            dataclasses.is_dataclass(value) or hasattr(value, "__dict__")):
        _feed(h, type(value), seen)  # an instance of your own class: the class and its state
        state = ({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
                 if dataclasses.is_dataclass(value) else vars(value))
        _items(h, state, seen, names)
    else:
        raise _Unkeyable(f"a {qualified(type(value))}")


def _items(h: Any, mapping: dict, seen: _Walk, names: frozenset[str]) -> None:
    """A dict's (or an instance's attributes') keys and values, in order."""
    h.update(f"dict[{len(mapping)}]".encode())
    for key, item in mapping.items():
        _value(h, key, seen, names)
        _value(h, item, seen, names)


def _module(h: Any, module: types.ModuleType, seen: _Walk, names: frozenset[str]) -> None:
    """A module a function reads attributes of: a library's or the package's by its name and
    version, your own by every attribute of it whose name the function's code reads."""
    name = module.__name__
    version = library_version(name)
    h.update(f"module {name} {version}".encode())
    if version or name.split(".")[0] == PACKAGE:
        return
    for attr in sorted(names):
        if attr in vars(module):
            h.update(b"attribute " + attr.encode())
            _held(h, vars(module)[attr], f"{name}.{attr}", seen, names)


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
