import os
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests: a fixed seed by default (CI and the README's test command
# see the same examples every run); `spacy project run properties` draws new
# random examples, many of them (HYPOTHESIS_PROFILE=random).
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("random", derandomize=False, max_examples=1000, print_blob=True)
# one reproducible draw per `--hypothesis-seed=K` (benchmarks/property_seeds.py runs many K)
settings.register_profile("seeded", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

import word_tables  # noqa: E402,F401  (registers test_lookahead.word_tables.v1)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.fail(f"benchmark data not found at {SHARED_DATA}: check out ../shared beside the repo")
    return SHARED_DATA


def reload_pipeline(nlp, how: str, path: Path):
    """The pipeline after a round trip through bytes, disk or pickle."""
    import pickle

    import spacy

    if how == "bytes":
        other = spacy.util.load_model_from_config(nlp.config)  # the same settings
        return other.from_bytes(nlp.to_bytes())
    if how == "disk":
        nlp.to_disk(path)
        return spacy.load(path)
    return pickle.loads(pickle.dumps(nlp))
