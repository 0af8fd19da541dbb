"""Knowledge from unlabelled text, spaCy's way: the `lexeme_cluster` (Brown
clusters) and `lexeme_prob` (unigram log probabilities) tables of
spacy-lookups-data, loaded into the vocab by `[initialize.lookups]`, so
that `token.cluster` and `token.prob` are set and the templates' `cluster`,
`clusterK` and `prob` atoms read them.

    [initialize.lookups]
    @misc = "spacy_lookahead.lexeme_tables.v1"
    lang = ${nlp.lang}
    max_words = 200000

The tables have a million English words each; `max_words` keeps the most
probable ones (the others read as words the tables lack), so that the
trained pipeline, which carries the tables in its vocab, stays small and
runs without spacy-lookups-data installed. Each component that reads them
also keeps its own copy (saved with it, `lexicon`), so that it brings them
into a pipeline it is sourced into (`source = ...` copies no tables). A
trained component's features read its own copy, the tables it was trained
with, even where the vocab holds another table of that name (another
component's, with more words, say); `token.cluster` and `token.prob` read
the vocab's.
"""
from typing import Dict, List, Optional

from spacy.lookups import Lookups, Table, load_lookups
from spacy.util import registry
from spacy.vocab import Vocab

from .spacy_io import CLUSTER_TABLE, PROB_TABLE

SETTINGS_TABLE = "lexeme_settings"
TABLES = (CLUSTER_TABLE, PROB_TABLE, SETTINGS_TABLE)
INSTALL = "pip install spacy-lookups-data (or this package's [lookups] extra)"


@registry.misc("spacy_lookahead.lexeme_tables.v1")
def create_lexeme_tables(lang: str = "en", max_words: Optional[int] = 200000) -> Lookups:
    """The cluster and probability tables of `lang` from spacy-lookups-data,
    cut to the `max_words` most probable words (None: all)."""
    if max_words is not None and max_words < 1:
        raise ValueError(f"[initialize.lookups] max_words must be a positive number or null "
                         f"(every word), got {max_words!r}")
    try:
        full = load_lookups(lang, list(TABLES), strict=True)
    except ValueError as err:
        raise ValueError(f"[initialize.lookups] no {CLUSTER_TABLE} / {PROB_TABLE} tables for "
                         f"language {lang!r}: {INSTALL}. ({err})") from None
    return prune_tables(full, max_words)


def prune_tables(lookups: Lookups, max_words: Optional[int]) -> Lookups:
    """A copy of the lookups whose cluster and probability tables hold the
    `max_words` most probable words of the probability table (ties: the
    table's order), the cluster table without its words of cluster 0 (no
    cluster: what a word the table lacks reads as too); other tables whole."""
    probs = lookups.get_table(PROB_TABLE)
    if max_words is None or max_words >= len(probs):
        kept = None
    else:
        ranked = sorted(probs.items(), key=lambda item: -item[1])
        kept = {key for key, _ in ranked[:max_words]}
    out = Lookups()
    for name in lookups.tables:
        table = lookups.get_table(name)
        if name not in (CLUSTER_TABLE, PROB_TABLE) or (kept is None and name == PROB_TABLE):
            out.set_table(name, table)
            continue
        cut = Table(name=name)
        for key, value in table.items():
            if (kept is None or key in kept) and (value or name != CLUSTER_TABLE):
                cut[key] = value
        out.set_table(name, cut)
    return out


def lexicon_tables(needs: Dict[str, bool]) -> List[str]:
    """The tables a component keeps, for what its templates read."""
    return ([CLUSTER_TABLE] if needs.get("cluster") else []) + (
        [PROB_TABLE, SETTINGS_TABLE] if needs.get("prob") else [])


def require_tables(component: str, vocab: Vocab, needs: Dict[str, bool]) -> None:
    """A clear error where the templates read a table the vocab lacks."""
    missing = [table for atom, table in (("cluster", CLUSTER_TABLE), ("prob", PROB_TABLE))
               if needs.get(atom) and not vocab.lookups.has_table(table)]
    if missing:
        raise ValueError(
            f"[{component}] its feature templates read the {' and '.join(missing)} table, and "
            "neither the component nor the vocab has one. Load the tables when the pipeline is "
            "initialised: "
            "[initialize.lookups] @misc = \"spacy_lookahead.lexeme_tables.v1\" (needs "
            f"{INSTALL}); a trained pipeline carries them in its vocab.")
