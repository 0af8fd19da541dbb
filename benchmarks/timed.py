"""Run a command, record its wall time and peak memory in metrics/time_<name>.json.

    python benchmarks/timed.py NAME [--metrics DIR] -- CMD [ARGS...]

NAME may contain a slash (`quick/spacy_tagger` -> metrics/quick/time_spacy_tagger.json).
A leading `python` in CMD is replaced by this interpreter (as weasel does for
the commands of project.yml). Thread pools of numpy/BLAS are limited to one
thread unless the environment already says otherwise, so that a benchmark
uses one core. The JSON is written only when the command succeeds; the exit
code of the command is passed on.
"""
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def main(argv):
    if "--" not in argv or argv.index("--") == 0:
        sys.exit(__doc__)
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    name, metrics = opts[0], "metrics"
    if "--metrics" in opts:
        metrics = opts[opts.index("--metrics") + 1]
    if not cmd:
        sys.exit(__doc__)
    if cmd[0] in ("python", "python3"):
        cmd[0] = sys.executable
    env = dict(os.environ)
    for var in THREAD_VARS:
        env.setdefault(var, "1")
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, env=env)
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        print(f"timed.py: command failed with exit code {rc}; no timing written", file=sys.stderr)
        return rc
    out = Path(metrics) / Path(name).parent / f"time_{Path(name).name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "name": name,
        "command": cmd,
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(wall, 2),
        "user_seconds": round(usage.ru_utime, 2),
        "system_seconds": round(usage.ru_stime, 2),
        # ru_maxrss: KiB on Linux, bytes on macOS; the largest child, not a sum
        "peak_rss_mb": round(usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1),
        "threads": {v: env[v] for v in THREAD_VARS},
        "python": platform.python_version(),
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"timed.py: {name}: {wall:.1f} s wall, peak RSS {record['peak_rss_mb']} MB -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
