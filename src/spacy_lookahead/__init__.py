"""spacy-lookahead: search-based structured perceptrons (lookahead, beam,
SAPO, filtering-ranking) as spaCy components."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spacy-lookahead")
except PackageNotFoundError:  # a source tree that was not installed
    __version__ = "0+unknown"
