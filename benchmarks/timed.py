"""Run a command, record its wall time and peak memory in metrics/time_<name>.json.

    python -m benchmarks.timed NAME [--metrics DIR] -- CMD [ARGS...]

NAME may contain a slash (`quick/spacy_tagger` -> metrics/quick/time_spacy_tagger.json).
A leading `python` in CMD is this interpreter (as weasel runs project.yml's
commands); numpy/BLAS get one thread unless the environment says otherwise,
so that a benchmark uses one core. The JSON is written only when the
command succeeds; its exit code is passed on."""
import json
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.harness import one_thread, peak_rss_mb


def main(argv) -> int:
    if "--" not in argv or argv.index("--") == 0 or argv[-1] == "--":
        sys.exit(__doc__)
    opts, cmd = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    name, metrics = opts[0], opts[opts.index("--metrics") + 1] if "--metrics" in opts else "metrics"
    if cmd[0] in ("python", "python3"):
        cmd[0] = sys.executable
    threads = one_thread()
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd)
    wall = time.perf_counter() - t0
    if rc != 0:
        print(f"timed.py: command failed with exit code {rc}; no timing written", file=sys.stderr)
        return rc
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = Path(metrics) / Path(name).parent / f"time_{Path(name).name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"name": name, "command": cmd, "started": started.isoformat(timespec="seconds"),
              "wall_seconds": round(wall, 2), "user_seconds": round(usage.ru_utime, 2),
              "system_seconds": round(usage.ru_stime, 2),
              "peak_rss_mb": peak_rss_mb(resource.RUSAGE_CHILDREN),  # the largest child, not a sum
              "threads": threads, "python": platform.python_version()}
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"timed.py: {name}: {wall:.1f} s wall, peak RSS {record['peak_rss_mb']} MB -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
