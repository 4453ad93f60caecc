"""Local paths, s3:// and Azure Blob addresses through fsspec; atomic writes that never clobber.

`https://ACCOUNT.blob.core.windows.net/container/path` is read as `az://container/path` on that
account. Credentials come from the usual places (AWS_* variables, AZURE_STORAGE_CONNECTION_STRING
or AZURE_STORAGE_ACCOUNT_NAME/KEY), and `storage_options()` can be patched by a caller.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import IO, Any

from vectrixdb.errors import AlreadyExists, BadInput, NotFound

_BLOB_URL = re.compile(r"^https://([^./]+)\.blob\.core\.windows\.net/(.+)$")
_ADDRESS = re.compile(r"^(s3|s3a|gs|gcs|az|abfs|abfss|https?|memory)://\S+$")


def is_remote(path: Any) -> bool:
    """An object-store or web address (one token, a known scheme), as opposed to a local path or text."""
    return isinstance(path, str) and len(path) < 4096 and bool(_ADDRESS.match(path))


def _resolve(path: str) -> tuple[str, dict]:
    match = _BLOB_URL.match(path)
    if match:
        return f"az://{match.group(2)}", {"account_name": match.group(1)}
    return path, {}


def filesystem(path: str):
    """(fsspec filesystem, path inside it) for any address we accept."""
    import fsspec

    path, extra = _resolve(str(path))
    protocol = path.split("://", 1)[0] if is_remote(path) else "file"
    options = {**storage_options(protocol), **extra}
    if protocol in ("az", "abfs") and "connection_string" in options:
        options.pop("account_name", None)
    fs = fsspec.filesystem(protocol, **options)
    return fs, fs._strip_protocol(path) if protocol != "file" else str(Path(path).expanduser())


def storage_options(protocol: str) -> dict:
    if protocol == "s3" and os.environ.get("AWS_ENDPOINT_URL"):
        return {"client_kwargs": {"endpoint_url": os.environ["AWS_ENDPOINT_URL"]}}
    if protocol in ("az", "abfs") and os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
        return {"connection_string": os.environ["AZURE_STORAGE_CONNECTION_STRING"]}
    return {}


def basename(path: str) -> str:
    return str(path).rstrip("/").rsplit("/", 1)[-1]


def read_bytes(path: str | Path) -> bytes:
    fs, inner = filesystem(str(path))
    try:
        with fs.open(inner, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise NotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a folder, not a file") from None


def open_binary(path: str | Path) -> IO[bytes]:
    """A binary stream, for reading large files line by line without loading them whole."""
    fs, inner = filesystem(str(path))
    if not fs.exists(inner):
        raise NotFound(f"{path}: no such file")
    if fs.isdir(inner):
        raise BadInput(f"{path}: is a folder, not a file")
    return fs.open(inner, "rb")


def exists(path: str | Path) -> bool:
    fs, inner = filesystem(str(path))
    return fs.exists(inner)


def join(base: str | Path, *parts: str) -> str:
    base = str(base)
    return "/".join([base.rstrip("/"), *parts]) if is_remote(base) else str(Path(base, *parts))


def listdir(path: str | Path) -> list[str]:
    fs, inner = filesystem(str(path))
    if not fs.exists(inner):
        return []
    return sorted(basename(p["name"] if isinstance(p, dict) else p) for p in fs.ls(inner, detail=False))


def write_new(path: str | Path, data: bytes | str) -> str:
    """Write a file that must not exist yet; locally the write is atomic and never clobbers.

    Locally the bytes go to a temporary file beside the target, which is then hard-linked into
    place: link() fails if the target appeared meanwhile, so a file a person may have edited is
    never replaced. Remote stores get an existence check and a single put.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = str(path)
    if is_remote(path):
        fs, inner = filesystem(path)
        if fs.exists(inner):
            raise AlreadyExists(f"{path} already exists; it is never written over")
        with fs.open(inner, "wb") as fh:
            fh.write(data)
        return path
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise AlreadyExists(f"{path} already exists; it is never written over")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise AlreadyExists(f"{path} already exists; it is never written over") from None
    finally:
        os.unlink(tmp)
    return str(target)


def replace_atomic(path: str | Path, data: bytes) -> None:
    """Replace a file the library owns (an index, a cache) in one step: readers see old or new."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def overwrite_owned(path: str | Path, data: bytes | str) -> None:
    """Replace a file the library owns and rewrites as it goes (a running evaluation's report.json),
    never one a person edits: locally in one atomic step, on a store with a single put."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if is_remote(str(path)):
        fs, inner = filesystem(str(path))
        fs.pipe(inner, data)
        return
    replace_atomic(Path(path).expanduser(), data)


def move_aside_sqlite(path: Path) -> Path:
    """Rename a damaged SQLite file (and its write-ahead log and shared memory, which must not be
    replayed into a new file) to `<name>.damaged-<time>-<pid>` beside it; the new name's path."""
    import time

    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        try:
            Path(f"{path}{suffix}").rename(f"{aside}{suffix}")
        except FileNotFoundError:
            pass
    return aside
