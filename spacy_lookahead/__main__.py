"""`python -m spacy_lookahead evaluate ...` (see spacy_lookahead/evaluate.py)."""
import sys

from .evaluate import main

if __name__ == "__main__":
    if sys.argv[1:2] != ["evaluate"]:
        sys.exit("usage: python -m spacy_lookahead evaluate MODEL DATA.spacy --inputs tag[,chunks] "
                 "[spacy evaluate's options]")
    sys.exit(main(sys.argv[2:]))
