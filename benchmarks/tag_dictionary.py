"""Would a tag dictionary pay? (issue 34, item 4; Ratnaparkhi 1996, Honnibal 2013)

    python benchmarks/tag_dictionary.py MODEL TRAIN DEV [--min-count 3 20]
        [--pairs 5] [--output metrics/tag_dictionary.json]

The cheapest form of the trick, measured before building it: a word seen at
least `--min-count` times in TRAIN, always with one tag, gets that tag fixed
(the component's preset-label path: the search has one valid action there,
as it would with the dictionary). The tagger MODEL tags DEV's words with and
without the fixed tags, interleaved `--pairs` times; prints the share of
tokens fixed, tokens/second of both and their ratio, the tag accuracy of
both, and the peak memory. Fixing one tag is the dictionary's best case for
speed (a set of tags leaves the search more to do).
"""
import argparse
import json
import resource
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy
import spacy
from spacy.tokens import Doc, DocBin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("train")
    parser.add_argument("dev")
    parser.add_argument("--min-count", type=int, nargs="+", default=[3, 20])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    name = next(n for n, p in nlp.pipeline if p.__class__.__name__ == "LookaheadTagger")
    tagger = nlp.get_pipe(name)
    counts = defaultdict(Counter)
    for doc in DocBin().from_disk(args.train).get_docs(nlp.vocab):
        for t in doc:
            counts[t.text][t.tag_] += 1
    gold = list(DocBin().from_disk(args.dev).get_docs(nlp.vocab))
    n_tokens = sum(len(d) for d in gold)
    ids = {label: i for i, label in enumerate(tagger.actions)}
    plain = type(tagger).forced_ids
    rows = []
    for min_count in args.min_count:
        fixed = {w: next(iter(c)) for w, c in counts.items()
                 if len(c) == 1 and sum(c.values()) >= min_count}
        words = [[t.text for t in d] for d in gold]
        presets = [numpy.array([ids.get(fixed.get(w), -1) for w in ws], dtype="int32")
                   for ws in words]

        def run(with_dictionary: bool):
            docs = [Doc(nlp.vocab, words=ws) for ws in words]
            by_doc = {id(d): p for d, p in zip(docs, presets)}
            type(tagger).forced_ids = ((lambda self, doc: by_doc.get(id(doc)))
                                       if with_dictionary else plain)
            start = time.perf_counter()
            out = list(tagger.pipe(docs, batch_size=1000))
            seconds = time.perf_counter() - start
            right = sum(p.tag_ == g.tag_ for o, d in zip(out, gold) for p, g in zip(o, d))
            return n_tokens / seconds, right / n_tokens

        run(False)  # warm-up
        speeds = {False: [], True: []}
        accuracy = {}
        for _ in range(args.pairs):
            for with_dictionary in (False, True):
                wps, accuracy[with_dictionary] = run(with_dictionary)
                speeds[with_dictionary].append(wps)
        type(tagger).forced_ids = plain
        row = {"min_count": min_count,
               "fixed_share": sum(int((p >= 0).sum()) for p in presets) / n_tokens,
               "wps": statistics.median(speeds[False]),
               "wps_dictionary": statistics.median(speeds[True]),
               "ratio": statistics.median(b / a for a, b in zip(speeds[False], speeds[True])),
               "tag_acc": accuracy[False], "tag_acc_dictionary": accuracy[True]}
        rows.append(row)
        print(f"min count {min_count}: {row['fixed_share']:.1%} of tokens fixed; "
              f"{row['wps']:,.0f} -> {row['wps_dictionary']:,.0f} tokens/s "
              f"(x{row['ratio']:.2f}); tag acc {row['tag_acc']:.4f} -> "
              f"{row['tag_acc_dictionary']:.4f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"model": args.model, "dev": args.dev, "rows": rows,
                                           "peak_rss_mb": peak}, indent=2))


if __name__ == "__main__":
    main()
