"""Outside retrievers: how retrieval_report calls a retriever that is not a Vectrix, and reads what it returns.

Adapters are the "adapters" kind of vectrixdb/registry.py. An Adapter has up to two parts:

    calls(target)       -> a function (query, n) -> results when `target` is its kind of retriever,
                           else None (retrieval_report asks each adapter in registration order)
    reads(item, rank)   -> a Result (chunk id, doc id, pages, text, score) when `item` is its kind of
                           result, else None (labels.as_result reads ids, dicts and vectrixdb Hits
                           itself, then asks each adapter)
    stand_in(results)   -> a retriever of its kind that returns `results` (Results) for any query,
                           built without the library it adapts: the contract test
                           (tests/test_contracts.py) checks that calls + reads give those ids and
                           pages back
    describes(target)   -> what the retriever is, as a saved run records it (report.meta["system"],
                           after {"adapter": its name}): a function's module:qualname, a framework
                           retriever's class, a store's collection or table and embedding model;
                           plain JSON values only (system_of)

Built in: "function" (any callable (query) or (query, k) -> results), "langchain" (a retriever's
`.invoke`, its Documents with `metadata`), "llamaindex" (a retriever's `.retrieve`, NodeWithScore
results), "haystack" (a Pipeline or a component, its Documents with `meta`); stores.py adds the
vector databases. A framework document that names no document is refused (BadType, naming its
metadata keys and the keys read), never scored under a made-up id; one with no page carries why in
Result.unread, and the report leaves page figures undefined with that reason. A new one is one
`registry.register("adapters", "name", Adapter(...))` line in the module holding it; outside the
package, an entry point in the group `vectrixdb.adapters`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Optional

from vectrixdb import registry
from vectrixdb.errors import BadType
from vectrixdb.evaluation.golden.labels import Result

Search = Callable[[str, int], list]


@dataclass(frozen=True)
class Adapter:
    """How to call one kind of outside retriever and read its results (the module docstring)."""
    calls: Optional[Callable[[Any], Optional[Search]]] = None
    reads: Optional[Callable[[Any, int], Optional[Result]]] = None
    stand_in: Optional[Callable[[list[Result]], Any]] = None
    describes: Optional[Callable[[Any], dict]] = None


@registry.contract("adapters")
def _fits(name: str, adapter: Any) -> None:
    if not isinstance(adapter, Adapter) or (adapter.calls is None and adapter.reads is None):
        raise BadType(f"retriever adapter {name!r}: an adapter is an Adapter with calls= or reads= (or both), "
                      f"not {adapter!r}")


def search_of(target: Any) -> Search:
    """The function (query, n) -> results the first adapter that calls `target` gives."""
    for adapter in registry.members("adapters").values():
        found = adapter.calls(target) if adapter.calls is not None else None
        if found is not None:
            return found
    raise BadType(f"target must be a Vectrix or a callable query -> results, not {type(target).__name__} (an outside "
                  f"retriever of another kind is read through a registered adapter; registered: "
                  f"{registry.names('adapters')})")


def system_of(target: Any) -> dict[str, Any]:
    """What a saved run measured (report.meta["system"]): {"adapter": the name of the first adapter that
    calls `target`, ...what that adapter's `describes` says of it}; {} when none calls it."""
    for name, adapter in registry.members("adapters").items():
        if adapter.calls is not None and adapter.calls(target) is not None:
            about = adapter.describes(target) if adapter.describes is not None else {}
            return {"adapter": name, **{k: v for k, v in about.items() if v not in (None, "")}}
    return {}


def system_words(meta: dict) -> str | None:
    """A run's system in words, from its meta (the "system" system_of or scoring.measured recorded, and
    for a vectrixdb collection provenance's embedding models): `function my_rag:search`, `chroma:
    collection uber, embedding model all-MiniLM-L6-v2`; None for a run that recorded none."""
    system = meta.get("system")
    if not isinstance(system, dict) or not system.get("adapter"):
        return None
    adapter = str(system["adapter"])
    about = {k: v for k, v in system.items() if k != "adapter" and not (k == "store" and v == adapter)}
    models = meta.get("embedding_model")
    if adapter == "vectrixdb" and isinstance(models, dict) and models:
        about["embedding_model"] = (next(iter(models.values())) if list(models) == ["default"] else
                                    ", ".join(f"{space}: {model}" for space, model in models.items()))
    head = f"{adapter} {about.pop(adapter)}" if adapter in about else adapter
    words = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in about.items())
    return f"{head}: {words}" if words else head


def qualified(obj: Any) -> str:
    """`module:qualname` of a function or class (of an object's class when it has no qualname of its own)."""
    named = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{getattr(named, '__module__', None) or '?'}:{getattr(named, '__qualname__', type(obj).__name__)}"


def model_name(embed: Any) -> str | None:
    """An embedding model's name as it gives it (`.name`, `.model_name`, `.model` when a string), else
    the module:qualname of the function or object; None for None."""
    if embed is None:
        return None
    for attribute in ("name", "model_name", "model"):
        got = getattr(embed, attribute, None)
        if isinstance(got, str) and got:
            return got
    return qualified(embed)


PAGE_KEYS = ("pages", "page_number", "page_label", "page")
K_NAMES = ("k", "n", "top_k", "limit")


def pages_of(meta: dict) -> tuple[int, ...]:
    """Pages from metadata, the first of: `pages` (a list) or `page_number`, 1-based; `page_label` when
    it is a number (LangChain's PyPDFLoader writes it and a 0-based `page`); `page`, 0-based as
    LangChain's PDF loaders write it. () when none is there."""
    if meta.get("pages"):
        return tuple(int(p) for p in meta["pages"])
    if meta.get("page_number") is not None:
        return (int(meta["page_number"]),)
    label = str(meta.get("page_label") or "").strip()
    if label.isdigit() and int(label) > 0:
        return (int(label),)
    if meta.get("page") is not None:
        return (int(meta["page"]) + 1,)
    return ()


def unread(who: str, meta: dict) -> str:
    """Why no page was read from `meta` (Result.unread), or "" when one was."""
    if pages_of(meta):
        return ""
    return f"{who}: no page in the metadata (read {', '.join(PAGE_KEYS)}; it holds {sorted(meta)})"


def doc_of(who: str, meta: dict, keys: tuple[str, ...]) -> str:
    """The document id from the first of `keys` in `meta`; a result without one is refused (BadType)
    naming what it holds and what was looked for, so it is never scored under a made-up id."""
    for key in keys:
        if meta.get(key):
            return str(meta[key])
    raise BadType(f"{who} result names no document: its metadata holds {sorted(meta)}, and the document id is read "
                  f"from {', '.join(keys)}; put the document's id (the golden file's name for it) under one of them")


# -- function: any callable (query) or (query, k) -> results ------------------------------------

def takes_k(fn: Callable) -> bool:
    """Whether `fn` takes a second positional argument (k, the number of results wanted)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: called with the query alone
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2:
        return False
    second = positional[1]  # `invoke(query, config=None)` is not a k: one with a default must be named as one
    return second.default is second.empty or second.name in K_NAMES


def _call_function(target: Any) -> Search | None:
    if not callable(target):
        return None
    return (lambda query, n: target(query, n)) if takes_k(target) else (lambda query, n: target(query))


def _function_stand_in(results: list[Result]) -> Any:
    return lambda query: [{"chunk_id": r.chunk_id, "doc_id": r.doc_id, "pages": list(r.pages), "text": r.text,
                           "score": r.score} for r in results]


registry.register("adapters", "function", Adapter(calls=_call_function, stand_in=_function_stand_in,
                                                  describes=lambda target: {"function": qualified(target)}))


# -- LangChain: a retriever's .invoke(query) -> Documents (page_content, metadata) ------------------

def _call_langchain(target: Any) -> Search | None:
    invoke = getattr(target, "invoke", None)
    return (lambda query, n: invoke(query)) if invoke is not None else None


def _read_langchain(item: Any, rank: int) -> Result | None:
    if not hasattr(item, "page_content"):
        return None
    meta = item.metadata or {}
    doc = doc_of("a LangChain Document", meta, ("doc_id", "source"))
    return Result(str(meta.get("chunk_id") or getattr(item, "id", None) or f"{doc}::{rank}"), doc, pages_of(meta),
                  item.page_content, meta.get("score"), unread("langchain", meta))


def _langchain_stand_in(results: list[Result]) -> Any:
    documents = [SimpleNamespace(page_content=r.text, id=None, metadata={"doc_id": r.doc_id, "chunk_id": r.chunk_id,
                                                                          "pages": list(r.pages), "score": r.score})
                 for r in results]
    return SimpleNamespace(invoke=lambda query: list(documents))


def _langchain_system(target: Any) -> dict:
    store = getattr(target, "vectorstore", None)  # a VectorStoreRetriever: its store and embeddings
    embeddings = getattr(store, "embeddings", None) if store is not None else None
    return {"retriever": qualified(target), "store": qualified(store) if store is not None else None,
            "embedding_model": model_name(embeddings)}


registry.register("adapters", "langchain", Adapter(calls=_call_langchain, reads=_read_langchain,
                                                   stand_in=_langchain_stand_in, describes=_langchain_system))


# -- LlamaIndex: NodeWithScore results (node.node_id, node.metadata, node.get_content()) ------------

def _call_llamaindex(target: Any) -> Search | None:
    retrieve = getattr(target, "retrieve", None)
    return (lambda query, n: retrieve(query)) if callable(retrieve) else None


def _read_llamaindex(item: Any, rank: int) -> Result | None:
    node = getattr(item, "node", None)
    if node is None:
        return None
    meta = dict(getattr(node, "metadata", {}) or {})
    doc = meta.get("doc_id") or meta.get("file_name") or getattr(node, "ref_doc_id", None)
    if not doc:
        doc_of("a LlamaIndex node", meta, ("doc_id", "file_name", "ref_doc_id (the node's source document)"))
    return Result(str(getattr(node, "node_id", rank)), str(doc), pages_of(meta), node.get_content(),
                  getattr(item, "score", None), unread("llamaindex", meta))


def _llamaindex_stand_in(results: list[Result]) -> Any:
    def node(r: Result) -> Any:
        return SimpleNamespace(node_id=r.chunk_id, ref_doc_id=r.doc_id, get_content=lambda: r.text,
                               metadata={"doc_id": r.doc_id, "pages": list(r.pages)})

    scored = [SimpleNamespace(node=node(r), score=r.score) for r in results]
    return lambda query: list(scored)


registry.register("adapters", "llamaindex", Adapter(calls=_call_llamaindex, reads=_read_llamaindex,
                                                    stand_in=_llamaindex_stand_in,
                                                    describes=lambda target: {"retriever": qualified(target)}))


# -- Haystack: a Pipeline (.run(data) with its query/text inputs filled) or a component (.run(query=...)) --

def _call_haystack(target: Any) -> Search | None:
    if any(c.__module__.startswith("haystack.core.pipeline") for c in type(target).__mro__):
        return lambda query, n: _pipeline_documents(target, query)
    if hasattr(target, "__haystack_input__") and callable(getattr(target, "run", None)):
        return lambda query, n: _documents("Haystack component", target.run(query=query))
    return None


def _pipeline_documents(pipeline: Any, query: str) -> list:
    """Every pipeline input named `query` or `text` gets the question; any other input without a default
    is refused by name (vectrixdb cannot know what to give it)."""
    data: dict[str, dict] = {}
    for name, sockets in pipeline.inputs().items():
        for socket, spec in sockets.items():
            if socket in ("query", "text"):
                data.setdefault(name, {})[socket] = query
            elif spec.get("is_mandatory"):
                raise BadType(f"Haystack pipeline: input {name}.{socket} is required, and vectrixdb gives only the "
                              "question to inputs named query or text; wrap the pipeline in a function (query) -> documents")
    outputs = pipeline.run(data)
    found = {name: out for name, out in outputs.items() if isinstance(out, dict) and "documents" in out}
    if len(found) != 1:
        raise BadType(f"Haystack pipeline: read its outputs {sorted(outputs)} and found {len(found)} component(s) "
                      f"with a `documents` output ({sorted(found)}); expected exactly one, the retriever's last step")
    return _documents("Haystack pipeline", next(iter(found.values())))


def _documents(who: str, output: Any) -> list:
    if not isinstance(output, dict) or not isinstance(output.get("documents"), list):
        raise BadType(f"{who}: run() returned {type(output).__name__} ({sorted(output) if isinstance(output, dict) else output!r:.80}); "
                      "expected a dict with a list under `documents`")
    return output["documents"]


def _read_haystack(item: Any, rank: int) -> Result | None:
    if not (hasattr(item, "content") and hasattr(item, "meta") and hasattr(item, "id")):
        return None
    meta = item.meta or {}
    doc = doc_of("a Haystack Document", meta, ("doc_id", "source", "file_path"))
    return Result(str(meta.get("chunk_id") or item.id), doc, pages_of(meta), item.content or "",
                  getattr(item, "score", None), unread("haystack", meta))


def _haystack_stand_in(results: list[Result]) -> Any:
    documents = [SimpleNamespace(id=r.chunk_id, content=r.text, score=r.score,
                                 meta={"doc_id": r.doc_id, "pages": list(r.pages)}) for r in results]
    return SimpleNamespace(__haystack_input__=None, run=lambda query: {"documents": list(documents)})


registry.register("adapters", "haystack", Adapter(calls=_call_haystack, reads=_read_haystack,
                                                  stand_in=_haystack_stand_in,
                                                  describes=lambda target: {"retriever": qualified(target)}))
