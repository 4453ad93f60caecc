"""The outside retriever `vectrixdb report` and `evaluate` measure instead of a vectrixdb collection.

    --retriever MODULE:FUNCTION        a function (query) or (query, k) -> results (or any retriever an
                                       adapter calls: a LangChain retriever, a store adapter, ...) from a
                                       module importable from the current directory or the Python path
    --retriever path/to/file.py:NAME   the same from a file
    --store chroma|lancedb|qdrant|postgres  with --collection NAME (the collection or table) and
                                       --store-path DIR (Chroma, LanceDB, Qdrant's local mode) or
                                       --store-url URL (a Chroma or Qdrant server, a LanceDB URI, a
                                       PostgreSQL connection string); --model the queries' embedding model
                                       (a model name, folder, NAME:model of a registered embedder or a
                                       route string); --store-option KEY=VALUE any other keyword of the
                                       store's adapter (doc_field=, page_field=, page_base=, ...)

Without --model, Chroma embeds the queries with the collection's own embedding function and
PostgreSQL searches its full text; LanceDB and Qdrant keep no model, so theirs is vectrixdb's default.
Whatever cannot be read (no colon, a module that is not there or fails to import, a missing attribute,
something no adapter can call, an unknown store, collection or option) is BadInput or NotFound naming
what was read: one line and a non-zero exit status, never a traceback.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from vectrixdb.errors import BadInput, NotFound
from vectrixdb.extras import needs

STORES = ("chroma", "lancedb", "qdrant", "postgres")
HOW = "--retriever takes module:function (a module importable from the current directory) or path/to/file.py:function"


def load_retriever(spec: str) -> Any:
    """The retriever `spec` names (module docstring); BadInput or NotFound naming what was read."""
    from vectrixdb.evaluation.retrieval.adapters import system_of

    where, colon, attribute = spec.strip().rpartition(":")
    if not colon or not where or not attribute or (len(where) == 1 and where.isalpha()):
        raise BadInput(f"{HOW}, not {spec!r}")
    module = _module(where, spec)
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            names = sorted(n for n, v in vars(module).items() if not n.startswith("_") and inspect.isfunction(v)
                           and v.__module__ == module.__name__)
            raise BadInput(f"--retriever {spec!r}: module {where!r} ({_file(module)}) has no attribute {attribute!r}"
                           + (f"; its functions: {', '.join(names)}" if names else ""))
        target = getattr(target, part)
    if inspect.ismodule(target) or inspect.isclass(target) or not system_of(target):
        raise BadInput(f"--retriever {spec!r}: {attribute!r} is {_kind(target)}, not a function (query) or "
                       "(query, k) -> results, nor a retriever an adapter can call")
    return target


def _module(where: str, spec: str) -> Any:
    path = Path(where).expanduser()
    try:
        if where.endswith(".py") or os.sep in where or "/" in where:
            if not path.is_file():
                raise NotFound(f"--retriever {spec!r}: no file {str(path)!r}")
            held = getattr(sys.modules.get(path.stem), "__file__", None)  # its own name, unless another has it
            name = path.stem if path.stem.isidentifier() and (held is None or Path(held).resolve() == path.resolve()) \
                else f"_vectrixdb_retriever_{abs(hash(str(path.resolve())))}"
            found = importlib.util.spec_from_file_location(name, path)
            if found is None or found.loader is None:
                raise BadInput(f"--retriever {spec!r}: {str(path)!r} cannot be imported as Python")
            module = importlib.util.module_from_spec(found)
            sys.modules[name] = module  # dataclasses and pickling look their module up by name
            found.loader.exec_module(module)
            return module
        if os.getcwd() not in sys.path and "" not in sys.path:  # `python -m`'s rule: the current directory
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        if error.name and (where == error.name or where.startswith(error.name + ".")):
            raise NotFound(f"--retriever {spec!r}: no module {where!r} in the current directory ({os.getcwd()}) or "
                           "on the Python path; give path/to/file.py:function for a file elsewhere") from None
        raise BadInput(f"--retriever {spec!r}: importing {where!r} failed: {error}") from None
    except (NotFound, BadInput):
        raise
    except Exception as error:  # noqa: BLE001 - the module's own error, said in one line
        raise BadInput(f"--retriever {spec!r}: importing {where!r} failed: {type(error).__name__}: {error}") from None


def _file(module: Any) -> str:
    return getattr(module, "__file__", None) or "built in"


def _kind(value: Any) -> str:
    if inspect.ismodule(value):
        return f"module {value.__name__}"
    if inspect.isclass(value):
        return f"the class {value.__qualname__} (give a function, or an instance the adapters call)"
    return f"{type(value).__name__} {value!r:.60}"


def store_options(given: list[str]) -> dict[str, Any]:
    """--store-option KEY=VALUE items as keywords: none/null -> None, true/false, whole numbers, else text."""
    out: dict[str, Any] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise BadInput(f"--store-option takes KEY=VALUE, e.g. doc_field=source, not {item!r}")
        text = value.strip()
        out[key.strip()] = (None if text.lower() in ("none", "null") else text.lower() == "true"
                            if text.lower() in ("true", "false") else int(text) if text.lstrip("-").isdigit() else text)
    return out


def open_store(store: str, *, collection: str | None, path: str | None, url: str | None, model: str | None,
               options: dict[str, Any]) -> Any:
    """A store adapter (evaluation/retrieval/stores.py) around the named collection or table, opened where it is."""
    from vectrixdb.evaluation.retrieval import stores

    if store not in STORES:
        raise BadInput(f"--store {store!r}: one of {', '.join(STORES)}")
    if not collection:
        raise BadInput(f"--store {store} needs --collection: the {'table' if store in ('lancedb', 'postgres') else 'collection'} "
                       "to search")
    if (path is None) == (url is None) and store != "postgres" or store == "postgres" and not url:
        raise BadInput(f"--store {store}: give " + ("--store-url (a connection string, e.g. postgresql://host/db)"
                                                    if store == "postgres" else "one of --store-path and --store-url"))
    kind = {"chroma": stores.ChromaRetriever, "lancedb": stores.LanceRetriever, "qdrant": stores.QdrantRetriever,
            "postgres": stores.PostgresRetriever}[store]
    taken = [p for p in inspect.signature(kind).parameters if p not in ("collection", "table", "client", "connection",
                                                                         "collection_name", "embed")]
    wrong = sorted(set(options) - set(taken))
    if wrong:
        raise BadInput(f"--store-option {', '.join(wrong)}: not an option of the {store} adapter; it takes "
                       f"{', '.join(taken)}")
    embed = _embedder(model, store)
    if store == "chroma":
        return kind(_chroma(collection, path, url), embed=embed, **options)
    if store == "lancedb":
        return kind(_lance(collection, path or url), embed=embed, **options)
    if store == "qdrant":
        return kind(_qdrant(collection, path, url), collection, embed=embed, **options)
    return kind(_postgres(collection, url), collection, embed=embed, **options)


def _embedder(model: str | None, store: str) -> Any:
    from vectrixdb.embedding import get_embedder

    if model is None and store in ("chroma", "postgres"):
        return None  # Chroma's own embedding function; PostgreSQL's full-text search
    return get_embedder(model)


def _chroma(name: str, path: str | None, url: str | None) -> Any:
    with needs("chroma"):
        import chromadb
    if path is not None and not Path(path).expanduser().is_dir():
        raise NotFound(f"--store-path {path}: no such folder (a Chroma PersistentClient's folder)")
    if path is not None:
        client = chromadb.PersistentClient(path=str(Path(path).expanduser()))
    else:
        from urllib.parse import urlsplit

        parts = urlsplit(str(url))
        client = chromadb.HttpClient(host=parts.hostname or "localhost", port=parts.port or 8000,
                                     ssl=parts.scheme == "https")
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    if name not in names:
        raise NotFound(f"chroma at {path or url}: no collection {name!r}; it holds {sorted(names) or 'none'}")
    return client.get_collection(name)


def _lance(name: str, uri: str | None) -> Any:
    with needs("lancedb"):
        import lancedb
    db = lancedb.connect(str(uri))
    try:
        return db.open_table(name)
    except (ValueError, FileNotFoundError) as error:
        names = sorted(getattr(db.list_tables(), "tables", None) or [])
        raise NotFound(f"lancedb at {uri}: no table {name!r}; it holds {names or 'none'} ({error})") from None


def _qdrant(name: str, path: str | None, url: str | None) -> Any:
    with needs("qdrant"):
        from qdrant_client import QdrantClient
    if path is not None and not Path(path).expanduser().is_dir():
        raise NotFound(f"--store-path {path}: no such folder (a Qdrant local-mode folder)")
    client = QdrantClient(path=str(Path(path).expanduser())) if path is not None else QdrantClient(url=url)
    if not client.collection_exists(name):
        names = [c.name for c in client.get_collections().collections]
        raise NotFound(f"qdrant at {path or url}: no collection {name!r}; it holds {sorted(names) or 'none'}")
    return client


def _postgres(table: str, url: str | None) -> Any:
    with needs("postgres"):
        import psycopg
    try:
        return psycopg.connect(str(url))
    except psycopg.OperationalError as error:
        raise NotFound(f"postgres at {url}: cannot connect ({' '.join(str(error).split())})") from None


def outside(retriever: str | None, store: str | None, *, collection: str | None = None, path: str | None = None,
            url: str | None = None, model: str | None = None, options: list[str] | None = None) -> Any:
    """The outside retriever the options name, or None when they name none (a vectrixdb collection)."""
    if retriever is not None and store is not None:
        raise BadInput("--retriever and --store each name the retriever to measure: give one")
    if retriever is not None:
        loose = {"--collection": collection, "--store-path": path, "--store-url": url, "--store-option": options}
    else:
        loose = {"--collection": collection, "--store-path": path, "--store-url": url, "--model": model,
                 "--store-option": options}
    given = [name for name, value in loose.items() if value not in (None, [])]
    if store is None and given:
        raise BadInput(f"{', '.join(given)}: for --store" + (" (a --retriever module builds its own)" if retriever else ""))
    if retriever is not None:
        if model is not None:
            raise BadInput("--model: for --store (a --retriever module embeds its queries itself)")
        return load_retriever(retriever)
    if store is not None:
        return open_store(store, collection=collection, path=path, url=url, model=model,
                          options=store_options(options or []))
    return None
