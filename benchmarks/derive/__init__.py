"""Rebuild the derived benchmark data from its public upstream files.

The benchmark data (shared/data, the local mirror) is partly derived: files
cut out of an archive, converted or reconstructed. Each module here remakes
one data set from the upstream files that project.yml names as `extra`
assets (pinned to a commit, with checksums), standard library only, byte for
byte the mirror's copy, so a clone without the mirror gets the same data:
conll2000 (members of NLTK's zip), wsj (the NLTK Penn Treebank sample:
dependencies and clauses), jnlpba (the training set rebuilt from standoff).
"""
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Tuple


@dataclass(frozen=True)
class Recipe:
    """Derived assets (outputs) made from upstream assets (inputs): the
    function `module.function(*input paths, out)` writes them, where out is
    the outputs' folder, or the output itself when there is one."""

    outputs: Tuple[str, ...]
    inputs: Tuple[str, ...]
    function: str  # "module:function", imported when needed

    def make(self, root: Path) -> None:
        module, name = self.function.split(":")
        make = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        outputs = [root / dest for dest in self.outputs]
        out = outputs[0] if len(outputs) == 1 else outputs[0].parent
        out.parent.mkdir(parents=True, exist_ok=True)
        make(*(root / dest for dest in self.inputs), out)


NLTK = "assets/upstream/nltk_data"
RECIPES = (
    Recipe(("assets/conll2000/train.txt", "assets/conll2000/test.txt"),
           (f"{NLTK}/conll2000.zip",), "conll2000:members"),
    Recipe(("assets/jnlpba/train.iob2",), ("assets/upstream/jnlpba/standoff_train",), "jnlpba:train"),
    Recipe(tuple(f"assets/wsj_dep_sample/{split}.conll" for split in ("train", "dev", "test")),
           (f"{NLTK}/dependency_treebank.zip",), "wsj:dependencies"),
    Recipe(tuple(f"assets/wsj_clauses/{split}.txt" for split in ("train", "dev", "test")),
           (f"{NLTK}/treebank.zip",), "wsj:clauses"),
)
