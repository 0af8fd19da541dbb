"""The search-and-update engine, shared by every component. Knows nothing of spaCy.

* `weights`  - hashed sparse class weights; lazy averaging (current value,
  running total, tick of last change) and lazy L2 (a global scale), so that
  every update is O(1); (de)serialisation.
* `features` - the atoms of a token (their layout; those of a word's text)
  and templates over them hashed with murmurhash into 64-bit keys in `nogil`
  code. The atoms spaCy gives (a vocab entry's) are read outside the engine,
  by `spacy_lookahead.spacy_io`.
* `system`   - the TransitionSystem interface (state = flat C struct copied
  with memcpy; is_final, set_valid, apply, extract, score, oracle).
* `instance` - one document as a system gives it (the C arrays its states
  point into, owned while it lives: start state, oracle, output).
* `search`   - lookahead search of depth D (Tsuruoka et al. 2011, Fig. 2);
  its scratch memory (`Workspace`, `workspace_for`), and `Replay`: the state
  of a path replayed outside the search, one per owner (a Workspace's for
  the updates, a Chain's own).
* `learn`    - the margin perceptron on lookahead scores (Fig. 3).
* `topn`     - exact top-n search for first-order systems: A* with the
  backward-Viterbi heuristic over a `Chain` (rows of scores computed on
  demand from states on a spine, so memory stays O(T)) (Sun et al.).
* `sapo`     - SAPO's update (Algorithm 1): softmax over the n best, real
  valued updates (summed per step/previous/action first, so agreeing outputs
  cancel), the L2 step left to `Weights.shrink`.
* `beam`     - beam search over any system, keeping the lattice of (parent,
  action, score) per step (Huang et al. 2012, Algorithm 7; also top-n); the
  size of a state in its buffers (`padded_size`), `beam_for`.
* `violation` - FINDVIOLATION and the violation-fixing updates: standard,
  early, max-violation, hybrid, latest (Huang et al. 2012, Sections 4-5).
* `learners` - one training function per learner, generic over every
  system: margin_perceptron, violation_fixing_perceptron, sapo.
* `fr_perceptron` - the FR-Perceptron (Carreras et al. 2005, Fig. 1) and
  CO-VP over any filtering-ranking recogniser.
* `decode`   - prediction over any system: greedy, lookahead or beam; the n
  best with their scores.
* `batch` (Python) - decoding the docs of a batch on several threads (the
  decoders release the GIL).
* `marginals` - exact probabilities of a first-order system: forward-backward
  over the label lattice (emissions times transitions where the system is
  homogeneous), Viterbi over it, step and segment probabilities.
* `calibration` - temperature scaling of the lattice's p(y | x): the tau of
  least NLL of the gold derivations, or of any cost (golden-section search).
* `views`    - the engine seen from Python, for tests and inspection.

How the later learners fit (one engine, many systems): beam search and the
violation-fixing updates (Huang et al. 2012) keep beams of copied states over
the same TransitionSystem and update with `add_path` (phi of an action
prefix replayed from the initial state); SAPO's top-n search uses the same
states and scores, with real-valued updates and `Weights.shrink` for L2; the
FR phrase recogniser (Carreras et al. 2005) uses `Weights` and the feature
hashing directly, with one class per phrase type for its filters and scorer.
"""
