"""Settings written in the papers' flat terms (search = "beam", beam_width,
learner = "sapo", n ...) as the component's search and learner blocks, for
tests that vary them: spacy_lookahead's own migration of such settings
(pipes/legacy.py), with each component's former defaults."""
from typing import Any, Dict

from spacy_lookahead.pipes.legacy import migrate_section


def blocks(factory: str, settings: Dict[str, Any]) -> Dict[str, Any]:
    return migrate_section(factory, dict(settings))
