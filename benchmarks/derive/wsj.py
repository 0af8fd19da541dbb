"""The NLTK Penn Treebank sample, rebuilt as two benchmark data sets.

* `dependencies`: `dependency_treebank.zip` (Malt-TAB) -> CoNLL-X
  (shared/data/wsj_dep_sample);
* `clauses`: `treebank.zip` (`treebank/combined/wsj_*.mrg`) -> a
  CoNLL-2001-style `WORD POS CHUNK CLAUSE` file (shared/data/wsj_clauses).

Both use the same split by file. The rule names in the comments are those of
shared/data/README.md, which describes the two data sets.
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path
from typing import Iterator

# Split by file: wsj_0001-0159 train, wsj_0160-0179 dev, wsj_0180-0199 test.
SPLITS = (("train", 1, 159), ("dev", 160, 179), ("test", 180, 199))

_FILE_NUMBER = re.compile(r"wsj_(\d{4})\.\w+$")


def split_of(name: str) -> str | None:
    """The split a member `.../wsj_NNNN.ext` belongs to (None: not a WSJ file)."""
    match = _FILE_NUMBER.search(name)
    if match is None:
        return None
    number = int(match.group(1))
    for split, first, last in SPLITS:
        if first <= number <= last:
            return split
    return None


def members_by_split(archive: zipfile.ZipFile, suffix: str) -> dict[str, list[str]]:
    """Member names ending in `suffix`, per split, in file order."""
    result: dict[str, list[str]] = {split: [] for split, _, _ in SPLITS}
    for name in sorted(archive.namelist(), key=lambda n: n.rsplit("/", 1)[-1]):
        split = split_of(name) if name.endswith(suffix) else None
        if split is not None:
            result[split].append(name)
    return result


def write_splits(out_dir: Path, suffix: str, texts: dict[str, str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, text in texts.items():
        # newline="\n": the same bytes on every platform.
        with open(out_dir / f"{split}{suffix}", "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


# --------------------------------------------------------------------------
# wsj_dep_sample: Malt-TAB -> CoNLL-X


def malt_sentences(text: str) -> Iterator[list[tuple[str, str, str]]]:
    """(word, POS, head) rows of each blank-line-separated sentence."""
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        rows = [tuple(line.split("\t")) for line in block.split("\n") if line.strip()]
        if rows:
            yield rows  # type: ignore[misc]


def conllx_sentence(rows: list[tuple[str, str, str]]) -> str:
    """ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL; no labels
    in the source, so DEPREL is ROOT for head 0 and `dep` otherwise."""
    lines = []
    for i, (word, tag, head) in enumerate(rows, 1):
        deprel = "ROOT" if head == "0" else "dep"
        lines.append("\t".join((str(i), word, "_", tag, tag, "_", head, deprel, "_", "_")))
    return "\n".join(lines) + "\n\n"


def dependencies(dependency_treebank_zip: Path, out_dir: Path) -> None:
    """Write train/dev/test.conll (wsj_dep_sample) from dependency_treebank.zip."""
    with zipfile.ZipFile(dependency_treebank_zip) as archive:
        texts = {
            split: "".join(
                conllx_sentence(rows)
                for name in names
                for rows in malt_sentences(archive.read(name).decode("utf-8"))
            )
            for split, names in members_by_split(archive, ".dp").items()
        }
    write_splits(Path(out_dir), ".conll", texts)
