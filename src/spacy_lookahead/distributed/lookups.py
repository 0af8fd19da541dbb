"""srsly's msgpack registries, looked up once for a block of work.

srsly looks up its msgpack encoders and decoders in catalogue's registries
at every call, scanning the installed packages' entry points and every
registered function (~0.5 ms a call, more than tagging a sentence), and
spaCy's DocBin calls msgpack once or twice per doc (user data, span
groups): more than half of reading a `spacy convert` corpus, and most of
writing or reading a chunking shard. Parameter mixing reads the corpus
and writes and reads its shards within `fixed_msgpack_registries`, and
annotate writes its shards so."""
import threading
from contextlib import contextmanager
from typing import Iterator


_fixed_lock = threading.Lock()
_fixed_depth = 0


@contextmanager
def fixed_msgpack_registries() -> Iterator[None]:
    """Within the block (and while any thread is in one) srsly's two
    msgpack registries answer with what they held on entry: the same
    functions, looked up once."""
    global _fixed_depth
    try:
        from srsly import msgpack as srsly_msgpack
        registries = (srsly_msgpack.msgpack_encoders, srsly_msgpack.msgpack_decoders)
    except (ImportError, AttributeError):  # another srsly: nothing to fix
        yield
        return
    with _fixed_lock:
        if _fixed_depth == 0:
            for registry_ in registries:
                snapshot = registry_.get_all()
                registry_.get_all = lambda snapshot=snapshot: dict(snapshot)
        _fixed_depth += 1
    try:
        yield
    finally:
        with _fixed_lock:
            _fixed_depth -= 1
            if _fixed_depth == 0:
                for registry_ in registries:
                    del registry_.get_all  # the class's method again
