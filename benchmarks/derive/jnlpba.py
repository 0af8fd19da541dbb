"""Rebuild JNLPBA 2004 `train.iob2` from the standoff files of spyysalo/jnlpba.

The original training file is missing from the upstream mirror; the standoff
texts (`standoff/train/<id>.txt`, title line + abstract) and their entity
annotations (`<id>.ann`) are there. The entity spans are exact; the GENIA
tokenization and sentence splitting are re-created by rules learnt on the
test side, where both forms exist (the data's README, shared/data/README.md
in the project's mirror, gives them in full):
* `( ) [ ] { } , ; : % " ? ! < > &` and dash runs `--` are tokens of their
  own; single hyphens and slashes stay inside words (`IL-2`, `CD4+/CD8+`);
* a final `.` is split off unless the word is an abbreviation, a dotted
  abbreviation or an initial in context, or a journal word in a citation;
* `'s`, a final `'` and `n't` are split, `cannot` is `can not`;
* every token is split at entity boundaries (GENIA tokens never cross one);
* `"` is written `` when it opens and '' otherwise;
* a sentence per line of text (a structured-abstract heading joins the next
  line), ending after each stand-alone `.`; two sentences an entity would
  cross are merged.
Measured against the original tokenization: on the test side 3,805 of 3,856
sentences (98.7%) and 8,660 of 8,662 entities identical; on 200 training
abstracts whose original tokens are public (MTL-Bioinformatics-2016,
devel.tsv) 1,709 of 1,739 sentences (98.3%) and 4,544 of 4,551 entities.
Output: `token TAB tag` per line, a blank line after each sentence,
documents in the order of their file base names sorted as strings.

Details that description leaves open, fixed by matching the mirror's copy
(md5 c2ea8432f7304c3c8cf0310e4335350d) byte for byte:
* a journal word (`Mol.`) keeps its period when the next whitespace chunk is
  another (`Cell.`) or a volume with `:` `,` `;` (`15,`), so `Sci. USA` and
  `Virol. 65 (1991)` split; an initial before a journal word is split
  (`J . Virol.`) unless it follows `(YEAR)`/`Copyright YEAR`;
* `-X.` (`anti-E.`) keeps its period only before a lower-case word;
* the `.` before `[` in the title is dropped only across at most one space;
* sentences are cut after the entity splitting: a `.` that an entity
  boundary cuts off ends a sentence (`"death domain."`) unless a letter or
  digit is glued to it (`NF-kappa B.I kappa B`).
With these rules the test side (standoff/test vs Genia4EReval2.iob2) gives
the README's figures: 3,857 sentences, 3,805 identical, 101,086 tokens.

Usage: python -m benchmarks.derive.jnlpba STANDOFF_DIR OUT_FILE
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import re
import sys
from pathlib import Path
from typing import NamedTuple


class Token(NamedTuple):
    start: int  # character offsets in the document text
    end: int
    text: str  # the written form (quotes as `` / '', `U S A` parts)


# Characters that are always a token of their own, and dash runs.
ALWAYS_SPLIT = re.compile(r"--+|[()\[\]{},;:%\"?!<>&]")
# Abbreviations whose final period stays on the word.
ABBREVIATIONS = frozenset(
    "e.g. i.e. vs. al. eqn. ca. approx. Dr. Fig. cf.".split()
)
DOTTED = re.compile(r"^(?:[A-Za-z]\.){2,}$")
INITIAL = re.compile(r"^[A-Z]\.$")
HYPHEN_INITIAL = re.compile(r"-[A-Z]\.$")
VOLUME = re.compile(r"^\d+[:,;]")
YEAR = re.compile(r"^(?:19|20)\d\d$")
PRIMER = re.compile(r"^5'-.*-3'$")
JOURNAL_WORD = re.compile(r"^[A-Z][a-z]+\.$")
# `cells.Patient`, `MB.Moreover`; not `CD3.TcR` or `(J.Jhan)`
GLUED_PERIOD = re.compile(r"(?<=[A-Za-z]{2})\.(?=[A-Z][a-z])")
HEADING = re.compile(r":\s*$")


def read_entities(ann: str) -> list[tuple[int, int, str]]:
    """(start, end, type) of the text-bound annotations of an .ann file."""
    entities = []
    for line in ann.splitlines():
        if line.startswith("T"):
            label, rest = line.split("\t")[1].split(" ", 1)
            start, end = rest.split(" ")[:2]
            entities.append((int(start), int(end), label))
    return sorted(entities)


def chunks(line: str, offset: int) -> list[tuple[int, str]]:
    """Whitespace-separated chunks of a line with their document offsets."""
    return [(offset + m.start(), m.group()) for m in re.finditer(r"\S+", line)]


def split_always(start: int, chunk: str) -> list[tuple[int, str]]:
    """Split off the always-split characters and dash runs."""
    pieces, pos = [], 0
    for m in ALWAYS_SPLIT.finditer(chunk):
        if m.start() > pos:
            pieces.append((start + pos, chunk[pos : m.start()]))
        pieces.append((start + m.start(), m.group()))
        pos = m.end()
    if pos < len(chunk):
        pieces.append((start + pos, chunk[pos:]))
    return pieces


def split_clitics(start: int, word: str) -> list[tuple[int, str]]:
    """`'s`, a final `'`, `n't` and `cannot` become tokens of their own."""
    if word.lower() == "cannot":
        return [(start, word[:3]), (start + 3, word[3:])]
    for suffix in ("'s", "n't", "'"):
        if word.endswith(suffix) and len(word) > len(suffix):
            cut = len(word) - len(suffix)
            return [(start, word[:cut]), (start + cut, word[cut:])]
    return [(start, word)]


def split_glued_periods(start: int, word: str) -> list[tuple[int, str]]:
    """A sentence period glued to a capitalised word: `cells.Patient`."""
    pieces, pos = [], 0
    for m in GLUED_PERIOD.finditer(word):
        pieces += [(start + pos, word[pos : m.start()]), (start + m.start(), ".")]
        pos = m.end()
    pieces.append((start + pos, word[pos:]))
    return pieces


def rule_pieces(line: str, offset: int) -> list[tuple[int, str]]:
    """Chunks cut at the always-split characters and glued periods."""
    pieces: list[tuple[int, str]] = []
    for start, chunk in chunks(line, offset):
        for pstart, piece in split_always(start, chunk):
            if ALWAYS_SPLIT.fullmatch(piece):
                pieces.append((pstart, piece))
            else:
                pieces += split_glued_periods(pstart, piece)
    return pieces


def next_chunk(line: str, offset: int, end: int) -> str:
    """The whitespace chunk after document offset `end`, if a space follows."""
    m = re.match(r"\s+(\S+)", line[end - offset :])
    return m.group(1) if m else ""


def after_year(pieces: list[tuple[int, str]], i: int) -> bool:
    """An initial after `(YEAR)` or `Copyright YEAR` starts a citation."""
    before = [p for _, p in pieces[max(0, i - 3) : i]]
    return (len(before) == 3 and before[0] == "(" and YEAR.match(before[1])
            and before[2] == ")") or (
        len(before) >= 2 and before[-2] == "Copyright" and YEAR.match(before[-1])
    )


def keeps_period(line: str, offset: int, pieces: list[tuple[int, str]], i: int) -> bool:
    """Whether the final `.` of piece i stays on it."""
    start, word = pieces[i]
    if len(word) < 2 or not word.endswith("."):
        return False
    if word in ABBREVIATIONS:
        return True
    nstart, nxt = pieces[i + 1] if i + 1 < len(pieces) else (-1, "")
    if nxt == '"' and nstart == start + len(word):
        return True  # "body." : the closing quote ends the sentence instead
    lower = nxt[:1].islower()
    capitalised = nxt[:1].isupper() and nxt[1:2].islower()
    if DOTTED.match(word):
        return not capitalised  # `B.V. All`
    if JOURNAL_WORD.match(word):
        # `Mol. Cell. Biol. 15,`: the next chunk is another such word or a
        # volume/year with its `:` `,` `;`
        chunk = next_chunk(line, offset, start + len(word))
        return bool(JOURNAL_WORD.match(chunk) or VOLUME.match(chunk))
    if INITIAL.match(word):
        return (
            lower
            or nxt in (",", ";", "&", "(")
            or bool(INITIAL.match(nxt))
            or after_year(pieces, i)
        )
    if HYPHEN_INITIAL.search(word):
        return lower  # `anti-E. coli`
    return False


def tokenize_line(line: str, offset: int) -> list[tuple[int, str]]:
    """Tokens (offset, surface) of one text line by the punctuation rules."""
    pieces = rule_pieces(line, offset)
    kept = [keeps_period(line, offset, pieces, i) for i in range(len(pieces))]
    tokens: list[tuple[int, str]] = []
    for (start, piece), keep in zip(pieces, kept):
        if ALWAYS_SPLIT.fullmatch(piece):
            tokens.append((start, piece))
        elif len(piece) > 1 and piece.endswith(".") and not keep:
            word = piece[:-1]
            # `5'-...-3'.` keeps its quote
            tokens += [(start, word)] if PRIMER.match(word) else split_clitics(start, word)
            tokens.append((start + len(word), "."))
        else:
            tokens += split_clitics(start, piece)
    return tokens


def split_at_entities(tokens: list[Token], boundaries: list[int]) -> list[Token]:
    """GENIA tokens never cross an entity boundary: cut them there
    (`IL-2-induced` -> `IL-2 -induced`). boundaries: sorted offsets."""
    out = []
    for tok in tokens:
        lo = bisect.bisect_right(boundaries, tok.start)
        hi = bisect.bisect_left(boundaries, tok.end)
        cuts = boundaries[lo:hi]
        if not cuts:
            out.append(tok)
            continue
        for left, right in zip([tok.start] + cuts, cuts + [tok.end]):
            part = tok.text[left - tok.start : right - tok.start]
            out.append(Token(left, right, part))
    return out


def quote_form(tokens: list[tuple[int, str]], text: str) -> list[Token]:
    """`"` is `` when it opens (after whitespace/bracket), '' otherwise."""
    out = []
    for start, surface in tokens:
        form = surface
        if surface == '"':
            before = text[start - 1] if start > 0 else "\n"
            form = "``" if before.isspace() or before in "([{" else "''"
        out.append(Token(start, start + len(surface), form))
    return out


def title_conventions(tokens: list[Token]) -> list[Token]:
    """Drop the `.` before a bracketed note / after `]`; `USA` in errata."""
    out: list[Token] = []
    in_erratum = False
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.text == "[":
            in_erratum = nxt is not None and nxt.text == "published"
        if tok.text == "." and (
            (nxt and nxt.text == "[" and nxt.start - tok.end <= 1)
            or (out and out[-1].text == "]" and out[-1].end == tok.start)
        ):
            continue
        if in_erratum and tok.text == "USA":
            out += [Token(tok.start + k, tok.start + k + 1, c) for k, c in enumerate("USA")]
            continue
        out.append(tok)
    return out


def ends_sentence(tokens: list[Token], i: int, text: str) -> bool:
    """A stand-alone `.` ends a sentence unless a letter or digit is glued
    to it from a word that is not a `cells.Patient` pair (`NF-kappa B.I kappa
    B`: the `.` is only cut off by the entity boundaries); so does a closing
    quote after a word-final period (`"body."`)."""
    tok = tokens[i]
    if tok.text == ".":
        after = text[tok.end : tok.end + 1]
        return not after.isalnum() or bool(GLUED_PERIOD.match(text, tok.start))
    prev = tokens[i - 1].text if i > 0 else ""
    return tok.text == "''" and len(prev) > 1 and prev.endswith(".")


def line_sentences(tokens: list[Token], text: str) -> list[list[Token]]:
    """Cut a line's tokens into sentences."""
    sentences, current = [], []
    for i, tok in enumerate(tokens):
        current.append(tok)
        if ends_sentence(tokens, i, text):
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def merge_crossing(
    sentences: list[list[Token]], entities: list[tuple[int, int, str]]
) -> list[list[Token]]:
    """Merge neighbouring sentences that an entity would cross."""
    merged: list[list[Token]] = []
    for sent in sentences:
        if merged and any(s < sent[0].start < e for s, e, _ in entities):
            merged[-1] = merged[-1] + sent
        else:
            merged.append(sent)
    return merged


def document(text: str, entities: list[tuple[int, int, str]]) -> list[list[Token]]:
    """Sentences of one document (title line + abstract lines)."""
    boundaries = sorted({b for s, e, _ in entities for b in (s, e)})
    sentences: list[list[Token]] = []
    offset, pending = 0, []
    for number, line in enumerate(text.split("\n")):
        tokens = quote_form(tokenize_line(line, offset), text)
        offset += len(line) + 1
        if number == 0:
            tokens = title_conventions(tokens)
        tokens = split_at_entities(tokens, boundaries)
        if number > 0 and HEADING.search(line):
            pending += tokens  # a heading line joins the next line
            continue
        line_sents = line_sentences(tokens, text)
        if pending and line_sents:
            line_sents[0] = pending + line_sents[0]
            pending = []
        sentences += line_sents
    if pending:
        sentences.append(pending)
    return merge_crossing([s for s in sentences if s], entities)


def tags(sentence: list[Token], entities: list[tuple[int, int, str]]) -> list[str]:
    """IOB2 tags: B- on the first token of an entity, I- on the rest
    (entities are flat and sorted by start; tokens never cross them)."""
    starts = [s for s, _, _ in entities]
    out = []
    for tok in sentence:
        i = bisect.bisect_right(starts, tok.start) - 1
        s, e, label = entities[i] if i >= 0 else (0, 0, "")
        out.append(("B-" if tok.start == s else "I-") + label if tok.end <= e else "O")
    return out


def iob2(text: str, ann: str) -> str:
    """The IOB2 lines of one document."""
    entities = read_entities(ann)
    lines = []
    for sentence in document(text, entities):
        for tok, tag in zip(sentence, tags(sentence, entities)):
            lines.append(f"{tok.text}\t{tag}\n")
        lines.append("\n")
    return "".join(lines)


def train(standoff_dir: Path, out: Path) -> None:
    """Write train.iob2 from standoff_dir/*.txt and *.ann."""
    names = sorted(p.stem for p in Path(standoff_dir).glob("*.txt"))
    with open(out, "w", encoding="utf-8", newline="") as f:
        for name in names:
            base = Path(standoff_dir) / name
            text = base.with_suffix(".txt").read_text(encoding="utf-8")
            ann = base.with_suffix(".ann").read_text(encoding="utf-8")
            f.write(iob2(text, ann))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("standoff_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    texts = sorted(args.standoff_dir.glob("*.txt"))
    missing = [t.with_suffix(".ann") for t in texts if not t.with_suffix(".ann").is_file()]
    if not texts or missing:
        what = missing[0] if missing else f"*.txt files in {args.standoff_dir}"
        print(f"error: missing input: {what}", file=sys.stderr)
        return 2
    train(args.standoff_dir, args.out)
    digest = hashlib.md5(args.out.read_bytes()).hexdigest()
    print(f"wrote {args.out} (md5 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
