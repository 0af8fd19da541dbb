"""The plugin's two registries, made as spaCy's own are: the `@search` and
`@learners` blocks of a component's config name functions registered here
(pipes/search.py, pipes/learners.py). Other packages can add to them through
the `thinc_search` and `thinc_learners` entry points (thinc names the group)."""
from spacy.util import registry

for _name in ("search", "learners"):
    if not hasattr(registry, _name):  # (once per process)
        registry.create(_name, entry_points=True)

search = registry.search
learners = registry.learners


def resolve_block(section: dict) -> object:
    """A block's config section (e.g. a saved component's cfg["search"]) as
    the object its registered function makes."""
    return registry.resolve({"block": section})["block"]
