"""Build the Cython extensions of the search-and-update core and the systems."""
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent
MODULES = [
    "spacy_lookahead.core.weights",
    "spacy_lookahead.core.features",
    "spacy_lookahead.core.system",
    "spacy_lookahead.core.instance",
    "spacy_lookahead.core.search",
    "spacy_lookahead.core.learn",
    "spacy_lookahead.core.topn",
    "spacy_lookahead.core.sapo",
    "spacy_lookahead.core.beam",
    "spacy_lookahead.core.violation",
    "spacy_lookahead.core.learners",
    "spacy_lookahead.core.decode",
    "spacy_lookahead.core.marginals",
    "spacy_lookahead.core.views",
    "spacy_lookahead.core.fr_perceptron",
    "spacy_lookahead.systems.tagging",
    "spacy_lookahead.systems.span_ids",
    "spacy_lookahead.systems.arc_standard",
    "spacy_lookahead.systems.phrase_features",
    "spacy_lookahead.systems.phrase_decoders",
    "spacy_lookahead.systems.phrases",
]

extensions = [
    Extension(
        name,
        [str(Path("src", *name.split(".")).with_suffix(".pyx"))],
        extra_compile_args=["-O3", "-Wno-unused-function", "-Wno-unreachable-code"],
        language="c++",
    )
    for name in MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["src"],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
