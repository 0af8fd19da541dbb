"""Fit a trained model's temperature again on the dev corpus of its own
training config, as `spacy train`'s scoring fits it (the component's
`fit_temperature` after the pipeline has annotated the dev docs), and save
the model: for a model whose prediction settings change after training
(e.g. a SAPO parser's n and beam width, `MODEL@n=16,beam_width=16`), or
trained before a change of the fit.

    python -m benchmarks.refit_temperature MODEL_DIR[@KEY=VALUE,...] OUTPUT_DIR
        [--component NAME] [--set PATH=VALUE ...]

The dev corpus is `[training] dev_corpus` of MODEL_DIR/config.cfg (paths
relative to the working directory, as in `spacy train`); --set overrides a
config value first, e.g. `--set paths.dev=corpus/ewt/dev.spacy`. The
component is the last one in the pipeline that writes probabilities unless
named. The weights and the best outputs do not change; the saved model has
the new temperature (and the @ settings).
"""
import argparse
import sys
from pathlib import Path

from spacy.training import Example
from spacy.util import load_config, resolve_dot_names

from benchmarks.harness import load, parse_spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="MODEL_DIR[@KEY=VALUE,...]")
    ap.add_argument("output", type=Path)
    ap.add_argument("--component", default=None)
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="a config override (dot path) before the dev corpus is read")
    args = ap.parse_args(argv)
    _, model, settings = parse_spec(f"model={args.model}")
    nlp = load(model, settings)
    overrides = dict(item.split("=", 1) for item in args.set)
    config = load_config(Path(model) / "config.cfg", overrides=overrides, interpolate=True)
    (dev_corpus,) = resolve_dot_names(config, [config["training"]["dev_corpus"]])
    dev = list(dev_corpus(nlp))
    names = [args.component] if args.component else [
        name for name, pipe in nlp.pipeline if getattr(pipe, "has_temperature", False)][-1:]
    if not names:
        print(f"{model}: no component writes probabilities at a temperature", file=sys.stderr)
        return 1
    pipe = nlp.get_pipe(names[0])
    # annotated by the pipeline first, as spaCy's evaluation does before scoring
    annotated = [Example(doc, eg.reference)
                 for doc, eg in zip(nlp.pipe(eg.predicted for eg in dev), dev)]
    before = pipe.temperature
    tau = pipe.fit_temperature(annotated)
    print(f"{args.model} [{names[0]}]: temperature {before} -> {tau} on {len(dev)} dev examples")
    nlp.to_disk(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
