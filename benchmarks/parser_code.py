"""`spacy train --code` file: registers the arc_standard_parser factory and
the readers from this checkout (needed when the installed entry points
point at another checkout)."""
import spacy_lookahead.pipes.parser  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401
import spacy_lookahead.readers.conllx  # noqa: F401
