"""The benchmark's one runner: trains, scores and times the experiments of
benchmarks/experiments.py, at either scale.

    python -m benchmarks.run stage GROUP [--scale full|quick]   # what a project command runs
    python -m benchmarks.run train|evaluate NAME|GROUP ... [--scale full|quick] [--force]
    python -m benchmarks.run speed NAME|GROUP ... [--scale full|quick] [--repeats 3]
    python -m benchmarks.run models [NAME|GROUP ...] [--scale full|quick]
    python -m benchmarks.run commands [GROUP ...] [--scale full|quick]   # the spacy train commands
    python -m benchmarks.run list

`stage` is one project command: the group's steps before, its training runs
(benchmarks/timed.py records wall time and peak memory), their test scores
(once per trained model), the steps after; the `speed` stage runs every
speed comparison, after the groups that train the models it times. A model
trained already at this scale is not trained again (`--force` retrains), so
an interrupted stage resumes. Experiments without a quick budget are left
out of the quick scale, and so are the speed runs that need them.

`models` writes <metrics>/model_NAME.json for every trained model of the
scale (training/NAME): the stopping settings of the config saved with it
and the dev scores of its meta.json (model-best, model-last); scoring a
model writes it too. benchmarks/report.py reads these, never training/."""
import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from benchmarks import experiments as X

QUICK_SPEED_LIMIT = 500  # test docs each quick speed run times


def execute(cmd: List[str], dry: bool = False) -> None:
    print("$", shlex.join(cmd), flush=True)
    if not dry:
        subprocess.run([sys.executable if cmd[0] == "python" else cmd[0], *cmd[1:]], check=True)


def select(names: List[str], scale: str) -> List[X.Experiment]:
    out = []
    for n in names:
        if n not in X.EXPERIMENTS and n not in X.GROUPS:
            sys.exit(f"run.py: no experiment or group {n!r}; `python -m benchmarks.run list` shows them")
        out += [X.EXPERIMENTS[n]] if n in X.EXPERIMENTS else X.group(n, scale)
    return [e for e in out if X.in_scale(e, scale)]


def trained(e: X.Experiment, scale: str) -> bool:
    return (Path(X.training_dir(e.name, scale)) / "model-last").exists()


def train(experiments: List[X.Experiment], scale: str, force: bool, dry: bool) -> None:
    for e in experiments:
        if trained(e, scale) and not force:
            print(f"{e.name}: trained already ({X.training_dir(e.name, scale)}; --force retrains)")
            continue
        timer = e.name if scale == "full" else f"quick/{e.name}"
        execute(["python", "-m", "benchmarks.timed", timer, "--", *X.train_command(e, scale)], dry)


def evaluate(experiments: List[X.Experiment], scale: str, dry: bool) -> None:
    for e in experiments:
        if not dry and not trained(e, scale):
            print(f"{e.name}: not trained at scale {scale}, not scored")
            continue
        execute(X.evaluation(e, scale), dry)
        if not dry:
            write_model_record(e, scale)


def model_record(e: X.Experiment, scale: str) -> Optional[dict]:
    """What the report needs of a trained model, from the files saved with it:
    the stopping settings of its config.cfg ([training], corpora.train.limit)
    and the dev scores of model-best's and model-last's meta.json; None when
    neither directory has a config.cfg."""
    from spacy.util import load_config
    root = Path(X.training_dir(e.name, scale))
    dirs = [d for d in (e.model, "model-best", "model-last") if (root / d / "config.cfg").exists()]
    if not dirs:
        return None
    cfg = load_config(root / dirs[0] / "config.cfg", interpolate=False)
    training = cfg.get("training", {})
    performance = {}
    for d in ("model-best", "model-last"):
        try:
            performance[d] = json.loads((root / d / "meta.json").read_text()).get("performance", {})
        except (OSError, ValueError):
            pass
    return {"name": e.name, "scale": scale, "model": f"{root}/{e.model}", "config_of": dirs[0],
            "training": {k: training[k] for k in ("max_epochs", "max_steps", "patience") if k in training},
            "spacy_train": bool(training),
            "train_limit": cfg.get("corpora", {}).get("train", {}).get("limit", 0),
            "performance": performance}


def write_model_record(e: X.Experiment, scale: str) -> None:
    record = model_record(e, scale)
    if record is None:
        return
    out = Path(X.metrics_dir(scale)) / f"model_{e.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=2, sort_keys=True) + "\n"
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
        print(f"run.py: wrote {out}")


def speed(runs: List[X.Speed], scale: str, repeats: int, dry: bool) -> None:
    for s in runs:
        cmd = X.speed_command(s, scale, repeats=repeats, limit=QUICK_SPEED_LIMIT if scale == "quick" else 0)
        if cmd is None:
            print(f"{s.name}: not timed at scale {scale} (its models are not trained there)")
        else:
            execute(cmd, dry)


def stage(group: str, scale: str, repeats: int, force: bool, dry: bool) -> None:
    if group not in X.GROUPS:
        sys.exit(f"run.py: no group {group!r}; groups: {', '.join(X.GROUPS)}")
    full = scale == "full"
    dirs = {"metrics": X.metrics_dir(scale), "training": X.training_dir("", scale).rstrip("/"),
            "plots": "benchmarks/plots" if full else "benchmarks/quick/plots",
            "packages": "packages" if full else "packages/quick", "scale": scale,
            "results": "benchmarks/results.md" if full else "benchmarks/quick/results.md"}
    steps = [s for s in X.STEPS if s.group == group and scale in s.scales]
    for s in steps:
        if s.when == "before":
            execute([part.format(**dirs) for part in s.command], dry)
    runs = [e for e in X.EXPERIMENTS.values() if e.group == group and X.in_scale(e, scale)]
    train(runs, scale, force, dry)
    evaluate(runs, scale, dry)
    if group == "speed":  # every comparison, after every model is trained
        speed(list(X.SPEEDS.values()), scale, repeats, dry)
    for s in steps:
        if s.when == "after":
            execute([part.format(**dirs) for part in s.command], dry)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=("stage", "train", "evaluate", "speed", "models", "commands", "list"))
    ap.add_argument("names", nargs="*")
    ap.add_argument("--scale", choices=X.SCALES, default="full")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes per speed run (median)")
    ap.add_argument("--force", action="store_true", help="retrain models trained already")
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = ap.parse_args(argv)
    if args.action == "stage":
        for group in args.names:
            stage(group, args.scale, args.repeats, args.force, args.dry_run)
    elif args.action == "train":
        train(select(args.names, args.scale), args.scale, args.force, args.dry_run)
    elif args.action == "evaluate":
        evaluate(select(args.names, args.scale), args.scale, args.dry_run)
    elif args.action == "speed":
        runs = [s for s in X.SPEEDS.values() if s.name in args.names or s.group in args.names
                or "speed" in args.names]
        speed(runs, args.scale, args.repeats, args.dry_run)
    elif args.action == "models":  # every model trained at this scale (none: nothing written)
        for e in {e.name: e for e in select(args.names or list(X.GROUPS), args.scale)}.values():
            if not args.dry_run:
                write_model_record(e, args.scale)
    elif args.action == "commands":
        for e in select(args.names or list(X.GROUPS), args.scale):
            print(f"* `{e.name}`: `{shlex.join(X.train_command(e, args.scale))}`")
    else:
        for g in X.GROUPS:
            names = [e.name for e in X.EXPERIMENTS.values() if e.group == g]
            speeds = [s.name for s in X.SPEEDS.values()] if g == "speed" else []
            print(f"{g}: {' '.join(names) or '-'}" + (f" | speed: {' '.join(speeds)}" if speeds else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
