"""`python -m spacy_lookahead evaluate ...` (spacy_lookahead/evaluate.py) and
`python -m spacy_lookahead jackknife ...` (spacy_lookahead/jackknife.py)."""
import sys

USAGE = ("usage: python -m spacy_lookahead evaluate MODEL DATA.spacy --inputs tag[,chunks] "
         "[spacy evaluate's options]\n"
         "       python -m spacy_lookahead jackknife CONFIG TRAIN.spacy OUTPUT.spacy "
         "[--folds 10] [--jobs N] [--section.key value ...]")

if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["evaluate"]:
        from .evaluate import main
    elif command == ["jackknife"]:
        from .jackknife import main
    else:
        sys.exit(USAGE)
    sys.exit(main(sys.argv[2:]))
