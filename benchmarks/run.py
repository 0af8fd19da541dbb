"""The benchmark's one runner: trains, scores and times the experiments of
benchmarks/experiments.py, at either scale.

    python benchmarks/run.py stage GROUP [--scale full|quick]   # what a project command runs
    python benchmarks/run.py train|evaluate NAME|GROUP ... [--scale full|quick] [--force]
    python benchmarks/run.py speed NAME|GROUP ... [--scale full|quick] [--repeats 3]
    python benchmarks/run.py models [NAME|GROUP ...] [--scale full|quick]
    python benchmarks/run.py commands [GROUP ...] [--scale full|quick]   # the spacy train commands
    python benchmarks/run.py list

`stage` is one project command: the group's steps before, its training runs
(benchmarks/timed.py records wall time and peak memory), their test scores
(once per trained model), the steps after; the `speed` stage runs every speed
comparison, after the groups that train the models it times. A run whose
model is already trained at this scale is not trained again (`--force`
retrains), so an interrupted stage resumes. Experiments without a quick
budget are left out of the quick scale, and so are the speed runs that need
them.

`models` writes <metrics>/model_NAME.json for every trained model of the
scale (training/NAME): the stopping settings of the config saved with it and
the dev scores of its meta.json (model-best, model-last). Scoring a model
writes it too. benchmarks/report.py reads these, never training/, so the
report is a function of metrics/ alone."""
import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402

QUICK_SPEED_LIMIT = 500  # test docs each quick speed run times


def execute(cmd: List[str], dry: bool = False) -> None:
    print("$", shlex.join(cmd), flush=True)
    if dry:
        return
    argv = [sys.executable if cmd[0] == "python" else cmd[0], *cmd[1:]]
    subprocess.run(argv, check=True)


def select(names: List[str], scale: str) -> List[X.Experiment]:
    out = []
    for n in names:
        if n in X.EXPERIMENTS:
            out.append(X.EXPERIMENTS[n])
        elif n in X.GROUPS:
            out += X.group(n, scale)
        else:
            sys.exit(f"run.py: no experiment or group {n!r}; `python benchmarks/run.py list` "
                     f"shows them")
    return [e for e in out if X.in_scale(e, scale)]


def trained(e: X.Experiment, scale: str) -> bool:
    return (Path(X.training_dir(e.name, scale)) / "model-last").exists()


def train(experiments: List[X.Experiment], scale: str, force: bool, dry: bool) -> None:
    for e in experiments:
        if trained(e, scale) and not force:
            print(f"{e.name}: trained already ({X.training_dir(e.name, scale)}; --force retrains)")
            continue
        timer = e.name if scale == "full" else f"quick/{e.name}"
        execute(["python", "benchmarks/timed.py", timer, "--", *X.train_command(e, scale)], dry)


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
    and the `performance` (dev scores) of model-best's and model-last's
    meta.json; None when neither directory has a config.cfg."""
    root = Path(X.training_dir(e.name, scale))
    dirs = [d for d in (e.model, "model-best", "model-last") if (root / d / "config.cfg").exists()]
    if not dirs:
        return None
    from spacy.util import load_config
    cfg = load_config(root / dirs[0] / "config.cfg", interpolate=False)
    training = cfg.get("training", {})
    performance = {}
    for d in ("model-best", "model-last"):
        try:
            performance[d] = json.loads((root / d / "meta.json").read_text()).get("performance", {})
        except (OSError, ValueError):
            pass
    return {"name": e.name, "scale": scale, "model": f"{root}/{e.model}", "config_of": dirs[0],
            "training": {k: training[k] for k in ("max_epochs", "max_steps", "patience")
                         if k in training},
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
        cmd = X.speed_command(s, scale, repeats=repeats,
                              limit=QUICK_SPEED_LIMIT if scale == "quick" else 0)
        if cmd is None:
            print(f"{s.name}: not timed at scale {scale} (its models are not trained there)")
            continue
        execute(cmd, dry)


def step(s: X.Step, scale: str, dry: bool) -> None:
    dirs = {"metrics": X.metrics_dir(scale), "training": X.training_dir("", scale).rstrip("/"),
            "plots": "benchmarks/plots" if scale == "full" else "benchmarks/quick/plots",
            "packages": "packages" if scale == "full" else "packages/quick", "scale": scale,
            "results": "benchmarks/results.md" if scale == "full" else "benchmarks/quick/results.md"}
    execute([part.format(**dirs) for part in s.command], dry)


def stage(group: str, scale: str, repeats: int, force: bool, dry: bool) -> None:
    if group not in X.GROUPS:
        sys.exit(f"run.py: no group {group!r}; groups: {', '.join(X.GROUPS)}")
    steps = [s for s in X.STEPS if s.group == group and scale in s.scales]
    for s in steps:
        if s.when == "before":
            step(s, scale, dry)
    runs = [e for e in X.EXPERIMENTS.values() if e.group == group and X.in_scale(e, scale)]
    train(runs, scale, force, dry)
    evaluate(runs, scale, dry)
    if group == "speed":  # every comparison, after every model is trained
        speed(list(X.SPEEDS.values()), scale, repeats, dry)
    for s in steps:
        if s.when == "after":
            step(s, scale, dry)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=("stage", "train", "evaluate", "speed", "models", "commands",
                                       "list"))
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
        chosen = {e.name: e for e in select(args.names or list(X.GROUPS), args.scale)}
        for e in chosen.values():
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
