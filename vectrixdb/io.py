"""Local paths, s3:// and Azure Blob addresses through fsspec; atomic writes that never clobber.

`https://ACCOUNT.blob.core.windows.net/container/path` is read as `az://container/path` on that
account. Credentials come from the usual places (AWS_* variables, AZURE_STORAGE_CONNECTION_STRING
or AZURE_STORAGE_ACCOUNT_NAME/KEY), and `storage_options()` can be patched by a caller.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Sequence

from vectrixdb.errors import AlreadyExists, BadInput, IOFailure, NotFound
from vectrixdb.extras import missing

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
    try:
        fs = fsspec.filesystem(protocol, **options)
    except ImportError as exc:  # fsspec's own: "Install s3fs to access S3"
        if protocol in STORE_EXTRAS:
            raise missing(*STORE_EXTRAS[protocol]) from None
        raise BadInput(f"{path}: {exc}") from None
    return fs, fs._strip_protocol(path) if protocol != "file" else str(Path(path).expanduser())


STORE_EXTRAS = {"s3": ("s3", "s3fs"), "s3a": ("s3", "s3fs"), "az": ("azure", "adlfs"), "abfs": ("azure", "adlfs"),
                "abfss": ("azure", "adlfs")}  # address scheme -> (the extra, the library fsspec wants)


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
    never replaced. Remote stores get an existence check and a single put. A path under a file is
    BadInput; a full disk or a folder that cannot be written is IOFailure naming the path, and
    leaves nothing behind (not even the temporary file).
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
    make_folder(target.parent, path)
    if target.exists():
        raise AlreadyExists(f"{path} already exists; it is never written over")
    tmp = _temp_beside(target, data, path, sync=True)
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise AlreadyExists(f"{path} already exists; it is never written over") from None
    except OSError as exc:
        raise failed(path, exc) from None
    finally:
        os.unlink(tmp)
    return str(target)


def replace_atomic(path: str | Path, data: bytes) -> None:
    """Replace a file the library owns (an index, a cache) in one step: readers see old or new."""
    target = Path(path)
    make_folder(target.parent, str(path))
    tmp = _temp_beside(target, data, str(path), sync=False)
    try:
        os.replace(tmp, target)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise failed(str(path), exc) from None
        raise


def write_folder(path: str | Path, files: Sequence[tuple[str, bytes | str]]) -> str:
    """Write a new folder holding `files` ((name, bytes or text), in order), all or nothing.

    Locally the files go into a hidden temporary folder beside it, which is renamed into place at
    the end; when anything fails (a full disk: IOFailure naming the file) the temporary folder is
    removed, so nothing is left, not even the first files. Remote stores have no rename: each file
    is put in order, and the ones put are removed again on failure. Never over an existing folder."""
    import shutil

    path = str(path)
    data = [(name, d.encode("utf-8") if isinstance(d, str) else d) for name, d in files]
    if is_remote(path):
        fs, inner = filesystem(path)
        if fs.exists(inner):
            raise AlreadyExists(f"{path} already exists; it is never written over")
        put: list[str] = []
        try:
            for name, d in data:
                fs.pipe(f"{inner.rstrip('/')}/{name}", d)
                put.append(f"{inner.rstrip('/')}/{name}")
        except BaseException:
            for done in put:
                with contextlib.suppress(Exception):  # the first error is the one to report
                    fs.rm(done)
            raise
        return path
    target = Path(path).expanduser()
    make_folder(target.parent, path)
    if target.exists():
        raise AlreadyExists(f"{path} already exists; it is never written over")
    try:
        tmp = tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise failed(path, exc) from None
    shown = path
    try:
        os.chmod(tmp, 0o777 & ~umask())  # mkdtemp makes it 0700; a folder gets what the umask gives
        for name, d in data:
            shown = join(path, name)
            fd = os.open(os.path.join(tmp, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
            try:
                view = memoryview(d)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
        shown = path
        os.rename(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise AlreadyExists(f"{path} already exists; it is never written over") from None
        if isinstance(exc, OSError):
            raise failed(shown, exc) from None
        raise
    return str(target)


def make_folder(folder: Path, shown: str) -> None:
    """Make a local folder and its parents for the file `shown`: one under a file is BadInput naming
    that file; one that cannot be made (a full disk, no permission) is IOFailure."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), folder)
        raise BadInput(f"{shown}: {blocker} is a file, not a folder, so nothing can be written under it") from None
    except OSError as exc:
        raise failed(shown, exc) from None


def failed(shown: str, exc: OSError) -> IOFailure:
    """The IOFailure for an operating-system error met while writing `shown` (its errno kept)."""
    why = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
           errno.EACCES: "permission denied", errno.EPERM: "permission denied",
           errno.EROFS: "the file system is read-only"}.get(exc.errno or 0, exc.strerror or str(exc))
    out = IOFailure(f"{shown}: could not be written ({why}); nothing was written there")
    out.errno = exc.errno
    return out


def _temp_beside(target: Path, data: bytes, shown: str, *, sync: bool) -> str:
    """A temporary file in target's folder holding `data` (flushed to disk with `sync`), with the
    mode a new file gets under the umask: mkstemp makes it 0600, which link() and replace() would
    hand on to the target, so a shared folder or a web server could not read what was written.
    Nothing is left behind when it fails; an OSError becomes IOFailure naming `shown`."""
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise failed(shown, exc) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, 0o666 & ~umask())
    except BaseException as exc:
        os.unlink(tmp)
        if isinstance(exc, OSError):
            raise failed(shown, exc) from None
        raise
    return tmp


_UMASK_LOCK = threading.Lock()


def umask() -> int:
    """The process's umask, read without changing it where Linux's /proc says it; elsewhere os.umask
    is set and put back under a lock (the only way to read it there)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


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
