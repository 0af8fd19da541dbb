"""`--code` file for `spacy train` / `spacy evaluate`: registers the FR
components, the CoNLL-2001 reader and the clause scorer when the package's
entry points are not installed (e.g. an older editable install)."""
import spacy_lookahead.pipes.phrases  # noqa: F401
import spacy_lookahead.readers.clauses  # noqa: F401
import spacy_lookahead.scoring  # noqa: F401
