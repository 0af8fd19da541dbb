"""`spacy evaluate` for components that need gold inputs.

    python -m spacy_lookahead evaluate MODEL DATA.spacy --inputs tag[,chunks]
        [--output OUT.json] [--spans-key chunks] [--gold-preproc] [--per-component] [--code F]

spaCy's `spacy evaluate` reads DATA with a plain `Corpus`, whose predicted
docs have the words only, and takes no reader; a stand-alone chunker, parser
or clause finder then refuses them (no POS tags). This runs spaCy's own
`spacy.cli.evaluate.evaluate` -- same scores, table and JSON -- with that one
`Corpus` swapped for `spacy_lookahead.keep_inputs.v1` (the gold `--inputs`
copied onto the predicted docs). A pipeline that makes its own inputs (a
tagger before the chunker) needs none of this: use `spacy evaluate`."""
import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence
from unittest import mock

import importlib
from spacy.cli._util import import_code

spacy_evaluate = importlib.import_module("spacy.cli.evaluate")  # spacy.cli.evaluate is also a function

from .readers.inputs import create_keep_inputs_reader


def evaluate(model: str, data_path: Path, inputs: List[str], *, gold_preproc: bool = False,
             **kwargs: Any) -> Dict[str, Any]:
    """spacy.cli.evaluate.evaluate on DATA read by keep_inputs.v1; kwargs are
    evaluate's (output, spans_key, per_component, silent, ...)."""
    reader = create_keep_inputs_reader(data_path, inputs=inputs, gold_preproc=gold_preproc)
    if not hasattr(spacy_evaluate, "Corpus"):  # a spaCy that builds its corpus otherwise
        raise RuntimeError("spacy.cli.evaluate no longer reads data through `Corpus`: "
                           "spacy_lookahead evaluate needs updating for this spaCy version")
    with mock.patch.object(spacy_evaluate, "Corpus", lambda *args, **kw: reader):
        return spacy_evaluate.evaluate(model, data_path, gold_preproc=gold_preproc, **kwargs)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m spacy_lookahead evaluate",
                                 description="spacy evaluate with gold input annotation kept")
    ap.add_argument("model")
    ap.add_argument("data_path", type=Path)
    ap.add_argument("--inputs", required=True,
                    help="comma-separated gold inputs: tag, pos, morph, lemma, or span-group keys")
    ap.add_argument("--output", "-o", type=Path, default=None)
    ap.add_argument("--code", "-c", type=Path, default=None)
    ap.add_argument("--gold-preproc", "-G", action="store_true")
    ap.add_argument("--per-component", "-P", action="store_true")
    ap.add_argument("--spans-key", "-sk", default="sc")
    args = ap.parse_args(argv)
    if not args.data_path.exists():
        ap.error(f"evaluation data not found: {args.data_path}")
    import_code(args.code)
    evaluate(args.model, args.data_path, [n.strip() for n in args.inputs.split(",") if n.strip()],
             gold_preproc=args.gold_preproc, output=args.output, per_component=args.per_component,
             spans_key=args.spans_key, silent=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
