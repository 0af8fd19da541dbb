"""python -m spacy_lookahead.distributed annotate|train ... (see --help)."""
import argparse
import sys
from pathlib import Path
from typing import List, Optional


def at_least(low: int):
    """An argparse type: a whole number >= low (0 workers or shards is an
    error, not the default)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def main(argv: Optional[List[str]] = None) -> int:
    """The command's exit status: 0, or 2 with a one-line error for a user
    error (a missing input, a bad setting, a refused model); --verbose
    shows the traceback instead."""
    ap = argparse.ArgumentParser(prog="python -m spacy_lookahead.distributed",
                                 description="Annotate a corpus or train by parameter mixing on Dask.")
    sub = ap.add_subparsers(dest="command", required=True)
    cluster = argparse.ArgumentParser(add_help=False)
    cluster.add_argument("--scheduler", default=None,
                         help="address of a running Dask scheduler (default: a LocalCluster)")
    cluster.add_argument("--workers", type=at_least(1), default=None,
                         help="worker processes of the LocalCluster (default: the cores)")
    cluster.add_argument("--verbose", action="store_true", help="tracebacks for errors")

    an = sub.add_parser("annotate", parents=[cluster],
                        help="run a pipeline over a corpus into DocBin shards and a manifest")
    an.add_argument("model", type=Path, help="a saved spaCy pipeline directory")
    an.add_argument("input", type=Path, help="a .jsonl file of {\"text\": ...}, a folder of .txt, or a .spacy DocBin")
    an.add_argument("output_dir", type=Path)
    an.add_argument("--batch-size", type=at_least(1), default=256, help="nlp.pipe batch size")
    an.add_argument("--n-threads", type=at_least(0), default=1,
                    help="decoding threads per worker (components' n_threads; 0: the cores)")
    an.add_argument("--shard-size", type=at_least(1), default=None,
                    help="inputs per partition and output shard (default: 4 shards per "
                         "worker, at most about 1M characters each; a resumed run keeps "
                         "its own)")

    tr = sub.add_parser("train", parents=[cluster],
                        help="train by iterative parameter mixing from a spacy train config; "
                             "spaCy-style overrides (--paths.train x) after the options")
    tr.add_argument("config", type=Path)
    tr.add_argument("--output", "-o", type=Path, default=None, help="where model-best / model-last go")
    tr.add_argument("--shards", type=at_least(1), default=None,
                    help="shards of the training corpus (default: the workers)")
    tr.add_argument("--mixing", default="iterative", choices=("iterative", "oneshot"),
                    help="iterative (IPM) or oneshot")
    tr.add_argument("--weighting", default="uniform", choices=("uniform", "updates"),
                    help="mixing coefficients: uniform or updates (McDonald et al. §4)")
    tr.add_argument("--evaluate", default="workers", choices=("workers", "driver"),
                    help="where each round's model annotates the dev set: on the workers, a "
                         "part each (default), or on the driver as spacy train does")
    tr.add_argument("--scorers", type=at_least(0), default=None,
                    help="processes beside the driver that score the dev set the workers "
                         "annotated, rounds side by side (default 2; 0: the driver scores)")
    tr.add_argument("--rounds", type=at_least(1), default=None,
                    help="mixing rounds (default: training.max_epochs)")

    args, rest = ap.parse_known_args(argv)
    try:
        return _run(ap, args, rest)
    except (ValueError, OSError, ImportError) as err:  # user errors: the message names the fix
        if args.verbose:
            raise
        print(f"{ap.prog} {args.command}: error: {err}", file=sys.stderr)
        return 2


def _run(ap: argparse.ArgumentParser, args: argparse.Namespace, rest: List[str]) -> int:
    if args.command == "annotate":
        if rest:
            ap.error(f"unrecognized arguments: {' '.join(rest)}")
        from .annotate import annotate, rejected_count
        manifest = annotate(args.model, args.input, args.output_dir, scheduler=args.scheduler,
                            workers=args.workers, batch_size=args.batch_size,
                            n_threads=args.n_threads, shard_size=args.shard_size)
        docs = sum(s["docs"] for s in manifest["shards"].values())
        print(f"annotate: {docs} docs in {len(manifest['shards'])} shards in {args.output_dir}; "
              f"{len(manifest['bad_inputs'])} bad inputs, {rejected_count(manifest)} rejected")
        return 0
    from spacy.cli._util import parse_config_overrides

    from .train import SCORERS, train
    overrides = parse_config_overrides(rest)
    shards = args.shards or args.workers
    if shards is None:
        import os
        shards = os.cpu_count() or 1
    train(args.config, args.output, overrides=overrides, scheduler=args.scheduler,
          workers=args.workers, shards=shards, mixing=args.mixing, rounds=args.rounds,
          weighting=args.weighting, evaluate=args.evaluate,
          scorers=SCORERS if args.scorers is None else args.scorers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
