"""CoNLL-2000 chunking data: the members of NLTK's conll2000.zip.

    python -m benchmarks.derive.conll2000 CONLL2000_ZIP OUT_DIR

NLTK's package (github.com/nltk/nltk_data, packages/corpora/conll2000.zip)
holds train.txt and test.txt exactly as the task distributed them, unzipped;
weasel cannot fetch a zip member, so this takes them out unchanged.
"""
import sys
import zipfile
from pathlib import Path

SPLITS = ("train.txt", "test.txt")


def members(conll2000_zip: Path, out_dir: Path) -> None:
    """Write out_dir/train.txt and test.txt, byte for byte the zip's members."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(conll2000_zip) as archive:
        for name in SPLITS:
            (out_dir / name).write_bytes(archive.read(f"conll2000/{name}"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    if not Path(sys.argv[1]).is_file():
        print(f"error: {sys.argv[1]} not found (the upstream zip: `spacy project assets --extra`)",
              file=sys.stderr)
        sys.exit(2)
    members(Path(sys.argv[1]), Path(sys.argv[2]))
