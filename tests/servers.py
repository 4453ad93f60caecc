"""Servers on loopback for the tests: an app (the dashboard) under uvicorn in a thread, a moto S3
server and azurite's Blob service."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(app, timeout: float = 30) -> Iterator[str]:
    """An ASGI app (the dashboard) under uvicorn on a free 127.0.0.1 port in a daemon thread: yields
    its base URL once uvicorn has started, and stops it on leaving."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + timeout
    while not server.started:
        if not thread.is_alive() or time.time() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start on 127.0.0.1:{port} within {timeout}s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def wait_for(port: int, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout}s")


def start_moto() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(port, proc, "moto server")
    return proc, f"http://127.0.0.1:{port}"


def azurite_binary() -> str:
    local = ROOT / ".cache" / "azurite" / "node_modules" / ".bin" / "azurite-blob"
    found = shutil.which("azurite-blob") or (str(local) if local.exists() else None)
    if not found:
        raise RuntimeError("azurite is not installed: `make test` installs it into .cache/azurite")
    return found


def start_azurite(folder: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([azurite_binary(), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
                             str(folder), "--silent", "--skipApiVersionCheck", "--disableTelemetry"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ})
    wait_for(port, proc, "azurite")
    conn = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;")
    return proc, conn
