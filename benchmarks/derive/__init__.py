"""Rebuild the derived benchmark data from its public upstream files.

The benchmark data (shared/data, the local mirror) is partly derived: files
cut out of an archive, converted or reconstructed. Each module here remakes
one data set from the upstream files that project.yml names as `extra`
assets (pinned to a commit, with checksums), standard library only, byte for
byte the mirror's copy, so a clone without the mirror gets the same data:
conll2000 (members of NLTK's zip), wsj (the NLTK Penn Treebank sample:
dependencies and clauses), jnlpba (the training set rebuilt from standoff).
"""
