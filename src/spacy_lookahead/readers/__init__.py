"""Registered corpus readers (exposed through the `spacy_readers` entry
point) and IOB/BILUO helpers:

* `spacy_lookahead.conll2000.v1`: CoNLL-2000 chunking files;
* `spacy_lookahead.iob.v1`: NER in IOB column files (JNLPBA, CoNLL-2003);
* `spacy_lookahead.keep_inputs.v1` (readers/inputs.py): a DocBin with gold
  input annotation (POS tags, chunks) kept on the predicted docs;
* `write_columns`: docs/examples back to column files (conlleval input);
* `doc_to_iob` / `iob_to_spans`: spans <-> IOB2/IOB1/BILUO tags.
"""
from .columns import (ColumnCorpus, create_conll2000_reader, create_iob_reader, read_sentences,
                      write_columns)
from .tags import (SCHEMES, TagError, check_tags, doc_to_iob, get_spans, iob2_to_iob1, iob_to_spans,
                   is_valid_tag, tags_to_biluo)

__all__ = ["ColumnCorpus", "create_conll2000_reader", "create_iob_reader", "read_sentences",
           "write_columns", "SCHEMES", "TagError", "check_tags", "doc_to_iob", "get_spans",
           "iob2_to_iob1", "iob_to_spans", "is_valid_tag", "tags_to_biluo"]
