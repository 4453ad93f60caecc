"""Helpers the benchmark scripts share: phases in fresh processes, peak memory, versions, the CPU, the critics' ending."""
from __future__ import annotations

import json
import platform
import resource
import subprocess
import sys
from importlib import metadata


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_phase(script: str, *args: str) -> dict:
    """Run `script --phase ...` in a fresh interpreter, so each phase's peak memory is its own."""
    done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"phase {args} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def versions(*names: str) -> dict:
    out = {"python": platform.python_version(), "machine": f"{platform.machine()}, {_cores()} cores"}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def write_json(path, out: dict, indent: int = 1) -> None:
    """A bench's ending: the CPU it ran on (machine_cpu) unless `out` names it, the load average
    after (1, 5 and 15 minutes: the last spans most runs), and `out` written atomically (a reader
    never sees half a file). Every bench writes through here, so every figure names its machine."""
    import os

    out.setdefault("cpu", machine_cpu())
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    write_atomic(path, out, indent=indent)


def keep_before(path, result: dict) -> dict:
    """result with the full run it replaces at `path` kept whole under "before" (that run's own
    "before" inside it); a --small run is never kept."""
    from pathlib import Path

    try:
        earlier = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return result
    return {**result, "before": earlier} if not earlier.get("small") else result


def write_atomic(path, out: dict, indent: int = 2) -> None:
    """`out` as JSON at `path` through a temporary file beside it: a reader never sees half a file."""
    from pathlib import Path

    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=indent, ensure_ascii=False) + "\n")
    tmp.replace(path)


def write_prompts(path: str, out: dict) -> None:
    """A prompt bench's ending: write_json, then each prompt's figures without its rows printed."""
    write_json(path, out)
    print(json.dumps({k: {a: b for a, b in v.items() if a != "rows"} for k, v in out["prompts"].items()}, indent=1))


def pdf_reader() -> str:
    """The reader this process reads PDFs with ($VECTRIXDB_PDF_READER, or the default): every bench
    that reads a PDF records it beside its CPU, since the readers' Markdown differs."""
    from vectrixdb.reading.pdf import pdf_reader as chosen

    return chosen()


def machine_cpu() -> str:
    """The CPU a figure was measured on: its model name, the cores this process may use, and the
    vector and matrix instruction sets that decide how fast the embedder runs (int8 needs VNNI or
    AMX to beat fp32), e.g. "Intel(R) Xeon(R) Processor, 2 cores, avx2, avx512f, avx512_vnni, ..."."""
    from pathlib import Path

    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")),
                platform.processor() or "?")
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8") if f in flags]
    return f"{name}, {_cores()} cores, {', '.join(isa) or 'no avx2'}"


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))
