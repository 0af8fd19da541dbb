"""Build the Cython extensions of the search-and-update core and the systems."""
import sys
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent
MODULES = [
    "spacy_lookahead.core.clock",
    "spacy_lookahead.core.threads",
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
    "spacy_lookahead.core.calibration",
    "spacy_lookahead.core.views",
    "spacy_lookahead.core.fr_perceptron",
    "spacy_lookahead.systems.tagging",
    "spacy_lookahead.systems.span_ids",
    "spacy_lookahead.systems.parse_features",
    "spacy_lookahead.systems.arc_standard",
    "spacy_lookahead.systems.phrase_features",
    "spacy_lookahead.systems.phrase_decoders",
    "spacy_lookahead.systems.phrases",
    "spacy_lookahead.spacy_io",
]

# MSVC takes its own flags (the release workflow builds Windows wheels)
# -g0 and -s: no debug information in the wheel (it made the wheel 6x larger)
COMPILE_ARGS = (["/O2"] if sys.platform == "win32"
                else ["-O3", "-g0", "-Wno-unused-function", "-Wno-unreachable-code"])
LINK_ARGS = ["-s"] if sys.platform.startswith("linux") else []
# Hot loops at aligned addresses: without it, an edit anywhere in a module moved
# the search's loops and changed the parser's speed by up to 8% from build to
# build (the same tables, bytes and pages: benchmarks/NOTES.md, 2026-12-05, eighth
# session)
if sys.platform.startswith("linux"):
    COMPILE_ARGS += ["-falign-functions=64", "-falign-loops=32"]

# spacy_io cimports spaCy's Doc and TokenC (spaCy's .pxd files cimport numpy's);
# these modules use numpy's C API
NUMPY_API = {"spacy_lookahead.spacy_io", "spacy_lookahead.systems.arc_standard"}

extensions = [
    Extension(
        name,
        [str(Path("src", *name.split(".")).with_suffix(".pyx"))],
        extra_compile_args=COMPILE_ARGS,
        extra_link_args=LINK_ARGS,
        include_dirs=[numpy.get_include()] if name in NUMPY_API else [],
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
            # signatures in the docstrings: help() shows them, stubgen reads
            # them for the .pyi stubs (no effect on the compiled code)
            "embedsignature": True,
            "embedsignature.format": "python",
        },
    ),
)
