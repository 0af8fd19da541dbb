"""The optimizer `spacy train` asks for. These components learn inside
update() (the perceptron updates, SAPO, the FR-Perceptron) and have no
thinc parameters, so spaCy's optimizer has nothing to do; the configs name
this one so that `spacy train` shows "Initial learn rate: 0.0" instead of
Adam's 0.001, which nothing would use."""
from thinc.api import Optimizer, SGD


def no_optimizer() -> Optimizer:
    """A thinc optimizer with learn rate 0 (spaCy's training loop needs one)."""
    return SGD(0.0)
