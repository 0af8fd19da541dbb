"""python -m spacy_lookahead.distributed annotate|train ... (see --help)."""
import argparse
import sys
from pathlib import Path
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m spacy_lookahead.distributed",
                                 description="Annotate a corpus or train by parameter mixing on Dask.")
    sub = ap.add_subparsers(dest="command", required=True)
    cluster = argparse.ArgumentParser(add_help=False)
    cluster.add_argument("--scheduler", default=None,
                         help="address of a running Dask scheduler (default: a LocalCluster)")
    cluster.add_argument("--workers", type=int, default=None,
                         help="worker processes of the LocalCluster (default: the cores)")

    an = sub.add_parser("annotate", parents=[cluster],
                        help="run a pipeline over a corpus into DocBin shards and a manifest")
    an.add_argument("model", type=Path, help="a saved spaCy pipeline directory")
    an.add_argument("input", type=Path, help="a .jsonl file of {\"text\": ...}, a folder of .txt, or a .spacy DocBin")
    an.add_argument("output_dir", type=Path)
    an.add_argument("--batch-size", type=int, default=256, help="nlp.pipe batch size")
    an.add_argument("--n-threads", type=int, default=1, help="decoding threads per worker (components' n_threads)")
    an.add_argument("--shard-size", type=int, default=1000, help="inputs per partition and output shard")

    tr = sub.add_parser("train", parents=[cluster],
                        help="train by iterative parameter mixing from a spacy train config; "
                             "spaCy-style overrides (--paths.train x) after the options")
    tr.add_argument("config", type=Path)
    tr.add_argument("--output", "-o", type=Path, default=None, help="where model-best / model-last go")
    tr.add_argument("--shards", type=int, default=None, help="shards of the training corpus (default: the workers)")
    tr.add_argument("--mixing", default="iterative", help="iterative (IPM) or oneshot")
    tr.add_argument("--weighting", default="uniform", help="mixing coefficients: uniform or updates (McDonald et al. §4)")
    tr.add_argument("--rounds", type=int, default=None, help="mixing rounds (default: training.max_epochs)")

    args, rest = ap.parse_known_args(argv)
    if args.command == "annotate":
        if rest:
            ap.error(f"unrecognized arguments: {' '.join(rest)}")
        from .annotate import annotate
        manifest = annotate(args.model, args.input, args.output_dir, scheduler=args.scheduler,
                            workers=args.workers, batch_size=args.batch_size,
                            n_threads=args.n_threads, shard_size=args.shard_size)
        docs = sum(s["docs"] for s in manifest["shards"].values())
        print(f"annotate: {docs} docs in {len(manifest['shards'])} shards in {args.output_dir}; "
              f"{len(manifest['bad_inputs'])} bad inputs")
        return 0
    from spacy.cli._util import parse_config_overrides

    from .train import train
    overrides = parse_config_overrides(rest)
    shards = args.shards or args.workers
    if shards is None:
        import os
        shards = os.cpu_count() or 1
    train(args.config, args.output, overrides=overrides, scheduler=args.scheduler,
          workers=args.workers, shards=shards, mixing=args.mixing, rounds=args.rounds,
          weighting=args.weighting)
    return 0


if __name__ == "__main__":
    sys.exit(main())
