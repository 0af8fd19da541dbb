"""Scale-out on Dask (the optional `distributed` extra): annotate a corpus in
partitions, and train by iterative parameter mixing (McDonald, Hall & Mann
2010). Nothing here is imported by the rest of the package, so the core does
not need Dask.

    python -m spacy_lookahead.distributed annotate MODEL INPUT OUTPUT_DIR
    python -m spacy_lookahead.distributed train CONFIG --output DIR
"""
