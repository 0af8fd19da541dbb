from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


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
