"""Sequence labelling as a transition system: one action per token, assigning
its label, left to right or right to left. Serves the tagger, chunker and
NER (Tsuruoka et al. 2011, Section 4.1)."""
from libc.stdint cimport int64_t, uint64_t
from libc.math cimport INFINITY
from libc.string cimport memcpy, memset
from cymem.cymem cimport Pool

import numpy

from ..core.features cimport (N_ATOMS, ATOM_BEFORE, LABEL_ATOM, MAX_OCCURRENCES, TemplateC,
                              extract_templates, extract_doc_templates, make_templates, feat1,
                              feat2)
from ..core.features import doc_occurrences
from .templates import PRESETS, compile_templates, expand, max_features
from ..core.instance cimport Docs, Instance
from libcpp.vector cimport vector
from ..core.system cimport TransitionSystem, partial_bound
from ..core.weights cimport Weights, feat_t



cdef struct TagDocC:
    int length
    const uint64_t* atoms      # length x N_ATOMS
    const int* sub_offsets     # length + 1: CSR offsets into subs (NULL: none)
    const uint64_t* subs       # substring hashes of the words
    const int* forced          # length, label fixed by preset annotation or -1; NULL: none
    const unsigned char* feasible  # length x nr_class, by step: 1 where the label leaves the
                               # rest a valid labelling (the presets under the scheme's
                               # constraints); NULL: every valid label does
    const int* occurrences     # length x MAX_OCCURRENCES: the word's other positions in the
                               # doc, for the `doc` templates (-1: none); NULL: none read
    const int* sent_lo         # length: where each token's sentence begins and ends (its
    const int* sent_hi         # tokens [lo, hi)); NULL: the doc is one sentence
    const int* gold            # length, -1 = unknown; NULL at prediction
    double* cache              # length x nr_class: scores of the static features
    int64_t* cache_version     # the Weights.version each cache row was made at
    const void* cache_owner    # ... and the Weights it was made with


cdef struct TagStateC:
    TagDocC* doc
    int step       # labels assigned so far
    int prev1      # label assigned one step ago (-1: none, also at a sentence's first step)
    int prev2      # label assigned two steps ago


cdef inline int sent_lo(const TagDocC* doc, int i) noexcept nogil:
    return doc.sent_lo[i] if doc.sent_lo != NULL else 0


cdef inline int sent_hi(const TagDocC* doc, int i) noexcept nogil:
    return doc.sent_hi[i] if doc.sent_hi != NULL else doc.length


# The label-history features (dynamic: they look at the labels assigned
# before). The static ones are the component's templates (templates.py),
# computed once per position and weights version.
cdef enum:
    T_PREV1 = 24
    T_PREV12 = 25

DEF N_DYNAMIC_MAX = 2
DEF N_SLOTS_MAX = 17   # offsets -8..+8 (templates.MAX_OFFSET)
DEF N_SUBSTRINGS_MAX = 64  # features.MAX_SUBSTRINGS


cdef struct PrevMaxC:
    # TaggingSystem.prev_max's cache: for the weights `table` at `version`
    uint64_t table
    int64_t version
    double value
    bint known


cdef class TaggingSystem(TransitionSystem):
    """Label every token; the label set is the action set.

    direction: "ltr" or "rtl" (the order in which labels are assigned; the
    "previous" labels are the ones assigned before, e.g. right neighbours for
    rtl). tag_trigrams: add the (prev1, prev2) feature (second-order history).
    feature_set: the preset of templates ("pos", "chunk" or "ner";
    templates.py) where `templates` is None; templates: the component's
    `features` setting (a list of template strings and presets).
    allowed: optional (nr_class + 1, nr_class) 0/1 matrix, in tagging order:
    row 0 = labels allowed with no previous label, row p + 1 = labels allowed
    after label p. at_doc_start / at_doc_end: labels allowed at the first /
    last token of a document (e.g. no I- at the start in IOB2).
    """
    cdef readonly bint rtl
    cdef readonly bint tag_trigrams
    cdef readonly str feature_set_name
    cdef readonly list templates   # the features setting it was made with
    cdef readonly list expanded    # [(template, hash id)]
    cdef TemplateC* tmpl
    cdef int n_templates, n_slots, n_doc_slots
    cdef int* slot_offsets
    cdef int* doc_offsets      # the `doc` templates' offsets from an occurrence
    cdef Pool mem
    cdef int* allowed
    cdef int* at_start
    cdef int* at_end
    cdef bint constrained
    cdef object constraints

    def __init__(self, int nr_class, direction="ltr", tag_trigrams=False, feature_set="pos",
                 allowed=None, at_doc_start=None, at_doc_end=None, templates=None):
        if nr_class < 1:
            raise ValueError("a tagging system needs at least one label")
        if direction not in ("ltr", "rtl"):
            raise ValueError(f"direction must be 'ltr' or 'rtl', got {direction!r}")
        if feature_set not in PRESETS:
            raise ValueError(f"feature_set must be one of {sorted(PRESETS)}, got {feature_set!r}")
        self.nr_class = nr_class
        self.rtl = direction == "rtl"
        self.tag_trigrams = bool(tag_trigrams)
        self.feature_set_name = feature_set
        self.mem = Pool()
        self._set_templates([f"preset:{feature_set}"] if templates is None else list(templates))
        self.state_size = sizeof(TagStateC)
        self.first_order = not self.tag_trigrams
        # static scores of the position + the previous label's feature
        self.homogeneous = self.first_order
        self.factors_across_breaks = True  # (history_restarts: a sentence's first step)
        if self.first_order:
            # branch-and-bound two steps ahead: every label is one sibling
            # group (what follows a label differs only in the previous-label
            # feature); the cache holds that feature's largest weight
            self.n_sibling_groups = 1
            self.bounds_two_steps = True
            self.cache_size = sizeof(PrevMaxC)
        ones = numpy.ones((nr_class,), dtype="int32")
        allowed = numpy.ones((nr_class + 1, nr_class), dtype="int32") if allowed is None else allowed
        at_doc_start = ones if at_doc_start is None else at_doc_start
        at_doc_end = ones if at_doc_end is None else at_doc_end
        allowed = numpy.ascontiguousarray(allowed, dtype="int32")
        if allowed.shape != (nr_class + 1, nr_class):
            raise ValueError(f"allowed must have shape {(nr_class + 1, nr_class)}, got {allowed.shape}")
        self.constraints = (allowed.tolist(), list(map(int, at_doc_start)), list(map(int, at_doc_end)))
        self.allowed = <int*>self.mem.alloc((nr_class + 1) * nr_class, sizeof(int))
        self.at_start = <int*>self.mem.alloc(nr_class, sizeof(int))
        self.at_end = <int*>self.mem.alloc(nr_class, sizeof(int))
        cdef int i, j
        for i in range(nr_class + 1):
            for j in range(nr_class):
                self.allowed[i * nr_class + j] = allowed[i, j]
        for j in range(nr_class):
            self.at_start[j] = at_doc_start[j]
            self.at_end[j] = at_doc_end[j]
        self.constrained = not (allowed.all() and all(at_doc_start) and all(at_doc_end))

    def _set_templates(self, list templates):
        """Compile the templates into C (templates.py says what they mean)."""
        self.templates = templates
        self.expanded = expand(templates, self.feature_set_name)
        arrays = compile_templates(self.expanded)
        cdef int k
        self.n_templates = len(self.expanded)
        self.tmpl = make_templates(self.mem, arrays)
        offsets = arrays["offsets"]
        self.n_slots = len(offsets)
        if self.n_slots > N_SLOTS_MAX:
            raise ValueError(f"the templates read {self.n_slots} offsets; at most {N_SLOTS_MAX}")
        self.slot_offsets = <int*>self.mem.alloc(self.n_slots, sizeof(int))
        for k in range(self.n_slots):
            self.slot_offsets[k] = offsets[k]
        doc_offsets = arrays["doc_offsets"]
        self.n_doc_slots = len(doc_offsets)
        if self.n_doc_slots > N_SLOTS_MAX:
            raise ValueError(f"the templates read {self.n_doc_slots} doc offsets; at most "
                             f"{N_SLOTS_MAX}")
        self.doc_offsets = <int*>self.mem.alloc(max(1, self.n_doc_slots), sizeof(int))
        for k in range(self.n_doc_slots):
            self.doc_offsets[k] = doc_offsets[k]
        self.max_feats = max_features(self.expanded) + N_DYNAMIC_MAX

    @property
    def reads_doc(self) -> bool:
        """Whether the templates read the word's other occurrences (`doc`)."""
        return self.n_doc_slots > 0

    @property
    def uses_substrings(self) -> bool:
        return any(text == "substrings[0]" for text, _ in self.expanded)

    @property
    def direction(self):
        return "rtl" if self.rtl else "ltr"

    cdef inline int position(self, const TagStateC* s) noexcept nogil:
        return s.doc.length - 1 - s.step if self.rtl else s.step

    cdef int extract_static(self, feat_t* f, const TagDocC* doc, int i) noexcept nogil:
        """The templates' features at token i; offsets outside its sentence
        read the sentinels, as outside the doc."""
        cdef int tokens[2 * N_SLOTS_MAX]  # each slot's token: i + its offset; then the doc slots
        cdef int k, n, lo = sent_lo(doc, i), hi = sent_hi(doc, i)
        for k in range(self.n_slots):
            tokens[k] = i + self.slot_offsets[k]
            if tokens[k] < lo:
                tokens[k] = -1
            elif tokens[k] >= hi:
                tokens[k] = doc.length
        n = extract_templates(f, self.tmpl, self.n_templates, doc.atoms, doc.length, tokens, i,
                              doc.sub_offsets, doc.subs, N_SUBSTRINGS_MAX)
        if self.n_doc_slots:
            n += extract_doc_templates(&f[n], self.tmpl, self.n_templates, doc.atoms, doc.length,
                                       tokens, self.n_slots, self.doc_offsets, self.n_doc_slots,
                                       i, doc.occurrences, doc.sent_lo, doc.sent_hi)
        return n

    cdef int extract_dynamic(self, feat_t* f, const TagStateC* s) noexcept nogil:
        cdef uint64_t p1 = LABEL_ATOM + s.prev1 if s.prev1 >= 0 else ATOM_BEFORE
        cdef uint64_t p2 = LABEL_ATOM + s.prev2 if s.prev2 >= 0 else ATOM_BEFORE
        f[0] = feat1(T_PREV1, p1)
        if self.tag_trigrams:
            f[1] = feat2(T_PREV12, p1, p2)
            return 2
        return 1

    cdef bint is_final(self, const void* state) noexcept nogil:
        cdef const TagStateC* s = <const TagStateC*>state
        return s.step >= s.doc.length

    cdef int set_valid(self, int* is_valid, const void* state) noexcept nogil:
        cdef const TagStateC* s = <const TagStateC*>state
        cdef int i = self.position(s), a, n = 0
        cdef const int* row = &self.allowed[(s.prev1 + 1) * self.nr_class]
        cdef int forced = s.doc.forced[i] if s.doc.forced != NULL else -1
        if not self.constrained and forced < 0:  # the common case: no checks per label
            for a in range(self.nr_class):
                is_valid[a] = 1
            return self.nr_class
        # static_ok()'s tests, made once for the position rather than per label
        cdef const int* first = self.at_start if i == sent_lo(s.doc, i) else NULL
        cdef const int* last = self.at_end if i == sent_hi(s.doc, i) - 1 else NULL
        cdef const unsigned char* feasible = (&s.doc.feasible[s.step * self.nr_class]
                                              if s.doc.feasible != NULL else NULL)
        cdef int ok
        for a in range(self.nr_class):
            ok = row[a] != 0
            if first != NULL and not first[a]:
                ok = 0
            if last != NULL and not last[a]:
                ok = 0
            if forced >= 0 and a != forced:
                ok = 0
            if feasible != NULL and not feasible[a]:
                ok = 0  # a dead end: a later preset could not follow
            is_valid[a] = ok
            n += ok
        return n

    cdef bint static_ok(self, const TagDocC* doc, int i, int a) noexcept nogil:
        """Whether label a may stand at token i on its own: the sentence's
        first and last token, the preset."""
        if i == sent_lo(doc, i) and not self.at_start[a]:
            return False
        if i == sent_hi(doc, i) - 1 and not self.at_end[a]:
            return False
        return doc.forced == NULL or doc.forced[i] < 0 or doc.forced[i] == a

    cdef void feasible_steps(self, const TagDocC* doc, unsigned char* out) noexcept nogil:
        """out[t, a] = 1 where label a at step t can be completed to the end
        of the doc under the constraints (backwards over the steps; the
        history starts again at each sentence's first step, as in apply())."""
        cdef int L = self.nr_class, n = doc.length, t, a, b, i, nxt
        cdef bint reset, ok
        cdef const int* row
        for t in range(n - 1, -1, -1):
            i = doc.length - 1 - t if self.rtl else t
            reset = False
            if t + 1 < n:
                nxt = doc.length - 2 - t if self.rtl else t + 1
                reset = nxt == (sent_hi(doc, nxt) - 1 if self.rtl else sent_lo(doc, nxt))
            for a in range(L):
                ok = self.static_ok(doc, i, a)
                if ok and t + 1 < n:
                    row = &self.allowed[(0 if reset else a + 1) * L]
                    ok = False
                    for b in range(L):
                        if out[(t + 1) * L + b] and row[b]:
                            ok = True
                            break
                out[t * L + a] = ok

    cdef void apply(self, void* state, int clas) noexcept nogil:
        """Assign the label; at the first step of a sentence (in the order
        of the steps) the history starts again, as at the doc's first."""
        cdef TagStateC* s = <TagStateC*>state
        cdef int i
        s.prev2 = s.prev1
        s.prev1 = clas
        s.step += 1
        if s.doc.sent_lo != NULL and s.step < s.doc.length:
            i = self.position(s)
            if i == (s.doc.sent_hi[i] - 1 if self.rtl else s.doc.sent_lo[i]):
                s.prev1 = s.prev2 = -1

    cdef int extract(self, feat_t* feats, const void* state) noexcept nogil:
        cdef const TagStateC* s = <const TagStateC*>state
        cdef int n = self.extract_static(feats, s.doc, self.position(s))
        return n + self.extract_dynamic(&feats[n], s)

    cdef void score(self, double* scores, const void* state, Weights W, feat_t* buf,
                    void* cache) noexcept nogil:
        # Incremental scoring: the static part is computed once per position
        # and weights version; only the history features are looked up here.
        cdef const TagStateC* s = <const TagStateC*>state
        memcpy(scores, self.static_scores(s, W, buf), self.nr_class * sizeof(double))
        cdef int n = self.extract_dynamic(buf, s)
        W.dot(scores, buf, n)

    cdef double upper(self, const void* state, Weights W, feat_t* buf, void* cache) noexcept nogil:
        """The best static score (cached) plus each history feature's
        largest weight: a bound of every label's score, summed as score()
        sums it."""
        cdef const TagStateC* s = <const TagStateC*>state
        cdef const double* row = self.static_scores(s, W, buf)
        return partial_bound(row, self.nr_class, W, buf, self.extract_dynamic(buf, s))

    cdef int sibling_group(self, const void* state, int action) noexcept nogil:
        return 0

    cdef double upper_group(self, const void* state, int group, int steps, Weights W,
                            feat_t* buf, void* cache) noexcept nogil:
        """First-order: the states 1 (2) steps after any label differ only in
        their previous label, so one bound covers them: the best static
        score at that position plus the previous-label feature's largest
        weight over every label (0 where they are final)."""
        cdef const TagStateC* s = <const TagStateC*>state
        return self.bound_at_step(s, s.step + steps, W, buf, cache)

    cdef double upper_after(self, const void* state, Weights W, feat_t* buf,
                            void* cache, double enough=INFINITY) noexcept nogil:
        cdef const TagStateC* s = <const TagStateC*>state
        return self.bound_at_step(s, s.step + 1, W, buf, cache)

    cdef double bound_at_step(self, const TagStateC* s, int step, Weights W, feat_t* buf,
                              void* cache) noexcept nogil:
        """A bound of the best action score of every state at `step` (its
        previous label any): 0 if such states are final."""
        cdef int n = s.doc.length
        if step >= n:
            return 0.0
        cdef const double* row = self.static_row(s.doc, n - 1 - step if self.rtl else step, W, buf)
        cdef double best = row[0]
        cdef int a
        for a in range(1, self.nr_class):
            if row[a] > best:
                best = row[a]
        return best + self.prev_max(W, cache)  # added as score() adds them

    cdef double prev_max(self, Weights W, void* cache) noexcept nogil:
        """The previous-label feature's largest weight over every label and
        none (a sentence's first step), kept in the caller's cache for the
        weights' identity and version."""
        cdef PrevMaxC* c = <PrevMaxC*>cache
        cdef double top = 0.0, m
        cdef int b
        if c.table == <uint64_t><size_t><void*>W and c.version == W.version and c.known:
            return c.value
        for b in range(-1, self.nr_class):
            m = W.row_max(feat1(T_PREV1, LABEL_ATOM + b if b >= 0 else ATOM_BEFORE))
            if m > top:
                top = m
        c.table = <uint64_t><size_t><void*>W
        c.version = W.version
        c.value = top
        c.known = True
        return top

    cdef const double* static_scores(self, const TagStateC* s, Weights W, feat_t* buf) noexcept nogil:
        """The static features' scores at the state's position."""
        return self.static_row(s.doc, self.position(s), W, buf)

    cdef const double* static_row(self, TagDocC* doc, int i, Weights W, feat_t* buf) noexcept nogil:
        """The static features' scores at position i, cached in the doc per
        weights version."""
        cdef double* cached = &doc.cache[i * self.nr_class]
        cdef int n, k
        if doc.cache_owner != <void*>W:  # rows of other weights, whatever their version
            for k in range(doc.length):
                doc.cache_version[k] = -1
            doc.cache_owner = <void*>W
        if doc.cache_version[i] != W.version:
            memset(cached, 0, self.nr_class * sizeof(double))
            n = self.extract_static(buf, doc, i)
            W.dot(cached, buf, n)
            doc.cache_version[i] = W.version
        return cached

    cdef void emission(self, double* scores, const void* state, Weights W,
                       feat_t* feats) noexcept nogil:
        """The static scores of the state's position; -inf for a label the
        position rules out (first or last token, preset label)."""
        cdef const TagStateC* s = <const TagStateC*>state
        cdef int i = self.position(s), a
        cdef int forced = s.doc.forced[i] if s.doc.forced != NULL else -1
        memcpy(scores, self.static_scores(s, W, feats), self.nr_class * sizeof(double))
        if not self.constrained and forced < 0:
            return
        for a in range(self.nr_class):
            if not self.static_ok(s.doc, i, a):
                scores[a] = -INFINITY

    cdef bint history_restarts(self, const void* state) noexcept nogil:
        """A sentence's first step: apply() set the history to none (-1)."""
        return (<const TagStateC*>state).prev1 < 0

    cdef void transition(self, double* scores, int prev, Weights W, feat_t* feats) noexcept nogil:
        """The previous-label feature's scores (prev -1: none yet); -inf for a
        label the scheme does not allow after it. score() adds the same
        feature to the static scores: emission + transition is its sum."""
        cdef int a
        cdef const int* row = &self.allowed[(prev + 1) * self.nr_class]
        for a in range(self.nr_class):
            scores[a] = 0.0
        feats[0] = feat1(T_PREV1, LABEL_ATOM + prev if prev >= 0 else ATOM_BEFORE)
        W.dot(scores, feats, 1)
        if self.constrained:
            for a in range(self.nr_class):
                if not row[a]:
                    scores[a] = -INFINITY

    cdef int oracle(self, const void* state) noexcept nogil:
        cdef const TagStateC* s = <const TagStateC*>state
        if s.doc.gold == NULL:
            return -1
        return s.doc.gold[self.position(s)]

    # --- Python: the engine's view of a doc ---------------------------------
    def instance(self, doc_input, gold=None):
        """A doc as the engine sees it: its atoms array (n, N_ATOMS), or a
        dict with "atoms" and optionally "substrings" (CSR offsets, hashes)
        and "forced" (see batch_instances); gold: an int32 label per token,
        -1 where unknown."""
        extras = doc_input if isinstance(doc_input, dict) else {"atoms": doc_input}
        atoms = numpy.asarray(extras["atoms"])
        n = atoms.shape[0] if atoms.ndim else 0
        return self.batch_instances({**extras, "atoms": atoms, "starts": [0, n]},
                                    None if gold is None else [gold])[0]

    def batch_instances(self, dict batch, golds=None):
        """The instances of a batch of docs from one set of arrays, without
        Python per token: "atoms" (N, N_ATOMS), the docs' tokens one after
        the other; "starts" (n_docs + 1,): where each doc's tokens begin;
        optionally "forced" (N,): a label fixed by preset annotation, -1
        where free; "substrings": CSR (offsets (N + 1,), hashes) over the N
        tokens. golds: per doc, an int32 label per token (-1: unknown)."""
        held = self._held(batch, False)
        cdef int n_docs = held.starts.shape[0] - 1
        if golds is not None and len(golds) != n_docs:
            raise ValueError(f"{n_docs} docs but {len(golds)} golds")
        return self._views(held, golds)

    cdef list _views(self, _TagBatch held, golds):
        """An instance per doc of the batch, viewing its arrays."""
        cdef const int64_t[::1] sv = held.starts
        cdef _TagDoc inst
        cdef int i
        out = []
        for i in range(held.n_docs):
            inst = _TagDoc.__new__(_TagDoc)
            inst.view(self, held, sv[i], sv[i + 1], None if golds is None else golds[i])
            out.append(inst)
        return out

    def batch_docs(self, dict batch):
        """The docs of a batch (arrays as batch_instances reads them) for
        core.decode.decode_docs: one object for the batch, no instance per
        doc. Prediction only (no gold)."""
        cdef _TagBatch held = self._held(batch, True)
        held.view_docs(self)
        return held

    def _held(self, dict batch, bint per_doc_rows):
        """The batch's arrays held for its searches. per_doc_rows: the
        searches fill each doc's deferred rows (batch["rows"], spacy_io's
        docs_inputs with defer) before they read them (Docs.load), where
        nothing reads them before (else they are filled here)."""
        rows = batch.get("rows")
        if rows is not None and (not per_doc_rows or self.n_doc_slots):
            rows.fill_all()  # (read before any search: the instances, doc_occurrences)
        starts = numpy.ascontiguousarray(batch["starts"], dtype="int64")
        n_docs = starts.shape[0] - 1
        atoms = numpy.ascontiguousarray(batch["atoms"], dtype="uint64")
        N = starts[n_docs] if n_docs >= 0 else 0
        if atoms.size == 0 and N == 0:
            atoms = numpy.zeros((0, N_ATOMS), dtype="uint64")
        if atoms.ndim != 2 or atoms.shape[1] != N_ATOMS or atoms.shape[0] != N:
            raise ValueError(f"expected ({N}, {N_ATOMS}) word atoms, got {atoms.shape}")
        if n_docs < 0 or starts[0] != 0 or (n_docs and numpy.any(numpy.diff(starts) < 0)):
            raise ValueError("starts must rise from 0 to the number of tokens")
        cdef _TagBatch held = _TagBatch(self, atoms, starts, batch.get("forced"),
                                        batch.get("substrings"),
                                        doc_occurrences(atoms, starts) if self.n_doc_slots else None,
                                        sentence_bounds(batch.get("sent_starts"), starts))
        if rows is not None and not rows.filled:
            subs = batch.get("substrings")
            if held.atoms is not batch["atoms"] or (
                    subs is not None and (held.offsets is not subs[0] or held.subs is not subs[1])):
                raise ValueError("rows filled per doc need the very arrays docs_inputs made "
                                 "(these were copied, and the copies would stay unfilled)")
            held.rows = rows
        return held

    def __reduce__(self):
        allowed, start, end = self.constraints
        return (TaggingSystem, (self.nr_class, self.direction, self.tag_trigrams,
                                self.feature_set_name, allowed, start, end, self.templates))


def sentence_bounds(sent_starts, starts):
    """(2, N) int32: per token of a batch, where its sentence begins and ends
    in its doc (lo, hi: doc positions), from `sent_starts` (N,): true where
    a sentence starts (each doc's first token starts one anyway); None
    where there are no sentence starts."""
    if sent_starts is None:
        return None
    starts = numpy.asarray(starts, dtype="int64")
    n_docs = len(starts) - 1
    N = int(starts[n_docs])
    first = numpy.asarray(sent_starts, dtype=bool).copy()
    if first.shape != (N,):
        raise ValueError(f"sent_starts has shape {first.shape} for {N} tokens")
    doc_starts = starts[:n_docs]
    first[doc_starts[doc_starts < N]] = True
    heads = numpy.flatnonzero(first)
    sentence = numpy.cumsum(first) - 1
    ends = numpy.append(heads[1:], N)
    doc_start = numpy.repeat(doc_starts, numpy.diff(starts))
    out = numpy.empty((2, N), dtype="int32")
    out[0] = heads[sentence] - doc_start
    out[1] = ends[sentence] - doc_start
    return out


cdef class _TagBatch(Docs):
    """The arrays the instances of one batch of docs point into (each
    instance keeps it alive): the atoms, preset labels and substrings of
    every token, and the per-token cache of static scores. As Docs (after
    view_docs): every doc's C view, for decode_docs."""
    cdef object atoms, forced, offsets, subs, cache, versions, occurrences, sentences
    cdef readonly object starts
    cdef vector[TagDocC] docs  # view_docs: doc i's view (made once: the states point into it)
    cdef list feasible         # ... and the tables they point to
    cdef bint rtl
    cdef Pool mem  # the instances' start states (a Pool per doc cost more than a short search)
    cdef uint64_t* atoms_p
    cdef int* forced_p
    cdef int* occurrences_p
    cdef int* lo_p
    cdef int* hi_p
    cdef int* offsets_p
    cdef uint64_t* subs_p
    cdef double* cache_p
    cdef int64_t* versions_p

    def __init__(self, TaggingSystem system, atoms, starts, forced, substrings, occurrences=None,
                 sentences=None):
        Docs.__init__(self, system, starts.shape[0] - 1)
        self.starts = starts
        self.rtl = system.rtl
        cdef int64_t N = atoms.shape[0]
        cdef uint64_t[:, ::1] av
        cdef int[:, ::1] occ, bounds
        cdef int[::1] fv, ofv
        cdef uint64_t[::1] sv
        cdef double[:, ::1] cv
        cdef int64_t[::1] vv
        self.atoms = atoms
        self.mem = Pool()
        if N:
            av = atoms
            self.atoms_p = &av[0, 0]
        if forced is not None and N:
            self.forced = numpy.ascontiguousarray(forced, dtype="int32")
            if self.forced.shape != (N,) or self.forced.max() >= system.nr_class:
                raise ValueError("forced labels do not match the doc or the label set")
            fv = self.forced
            self.forced_p = &fv[0]
        if substrings is not None and N:
            offsets, subs = substrings
            self.offsets = numpy.ascontiguousarray(offsets, dtype="int32")
            self.subs = numpy.ascontiguousarray(subs, dtype="uint64")
            if self.offsets.shape != (N + 1,) or self.subs.shape[0] < max(1, self.offsets[N]):
                raise ValueError("substring offsets do not match the doc")
            ofv = self.offsets
            sv = self.subs
            self.offsets_p = &ofv[0]
            self.subs_p = &sv[0]
        if occurrences is not None and N:
            self.occurrences = numpy.ascontiguousarray(occurrences, dtype="int32")
            if self.occurrences.shape != (N, MAX_OCCURRENCES):
                raise ValueError("occurrences do not match the doc")
            occ = self.occurrences
            self.occurrences_p = &occ[0, 0]
        if sentences is not None and N:
            self.sentences = sentences  # (2, N): lo, hi
            bounds = self.sentences
            self.lo_p = &bounds[0, 0]
            self.hi_p = &bounds[1, 0]
        # rows are made when first read (static_row): nothing to zero
        self.cache = numpy.empty((max(N, 1), system.nr_class), dtype="float64")
        self.versions = numpy.empty((max(N, 1),), dtype="int64")
        cv = self.cache
        vv = self.versions
        self.cache_p = &cv[0, 0]
        self.versions_p = &vv[0]
        with nogil:  # every row unmade: version -1 (all bits set)
            memset(self.versions_p, 0xff, max(N, 1) * sizeof(int64_t))


    def view_docs(self, TaggingSystem system):
        """Every doc's C view (as each _TagDoc's), for the Docs methods."""
        cdef const int64_t[::1] sv = self.starts
        cdef int i
        self.docs.resize(self.n_docs)
        self.feasible = []
        for i in range(self.n_docs):
            feasible = view_doc(&self.docs[i], system, self, sv[i], sv[i + 1])
            if feasible is not None:
                self.feasible.append(feasible)

    cdef bint load(self, int i) noexcept nogil:
        cdef const int* positions = NULL
        cdef int n
        if not Docs.load(self, i):
            return False
        if self.rows is None:
            return True
        if self.docs[i].sub_offsets != NULL:
            # (rows that keep each doc's substrings apart: the view points there)
            self.rows.substrings_of(i, &self.docs[i].sub_offsets, &self.docs[i].subs)
        n = self.rows.content_of(i, &positions)
        if positions != NULL:  # (its whitespace left out: its words' rows come first)
            self.docs[i].length = n
        return True

    cdef int length(self, int i) noexcept nogil:
        return self.docs[i].length

    cdef int max_steps(self, int i) noexcept nogil:
        return self.docs[i].length

    cdef void init_state(self, int i, void* state) noexcept nogil:
        start_state(<TagStateC*>state, &self.docs[i])

    cdef bint breaks(self, int i) noexcept nogil:
        return self.docs[i].sent_lo != NULL

    cdef void output(self, int i, const int* actions, int k, int* out, int64_t stride,
                     void* scratch) noexcept nogil:
        write_labels(out, self.docs[i].length, actions, k, self.rtl)


cdef inline void start_state(TagStateC* s, TagDocC* doc) noexcept nogil:
    s.doc = doc
    s.step = 0
    s.prev1 = s.prev2 = -1


cdef void write_labels(int* out, int n, const int* actions, int k, bint rtl) noexcept nogil:
    """The labels in document order from the first k actions (tokens not
    reached: label 0)."""
    cdef int i
    for i in range(n):
        out[i] = 0
    for i in range(k):
        out[n - 1 - i if rtl else i] = actions[i]


cdef object view_doc(TagDocC* c, TaggingSystem system, _TagBatch batch, int64_t start,
                     int64_t end):
    """The C view of the tokens start..end - 1 of a batch (no gold); returns
    the table it points to that the caller keeps alive (the feasible steps
    of presets under constraints), or None."""
    cdef int n = <int>(end - start)
    cdef unsigned char[:, ::1] fv
    c.length = n
    c.atoms = batch.atoms_p + start * N_ATOMS if n else NULL
    c.forced = batch.forced_p + start if batch.forced_p != NULL and n else NULL
    c.sub_offsets = batch.offsets_p + start if batch.offsets_p != NULL and n else NULL
    c.subs = batch.subs_p if c.sub_offsets != NULL else NULL
    c.occurrences = (batch.occurrences_p + start * MAX_OCCURRENCES
                     if batch.occurrences_p != NULL and n else NULL)
    c.sent_lo = c.sent_hi = NULL
    if batch.lo_p != NULL and n and batch.hi_p[start] < n:  # more than one sentence
        c.sent_lo = batch.lo_p + start
        c.sent_hi = batch.hi_p + start
    c.feasible = NULL
    c.cache = batch.cache_p + start * system.nr_class
    c.cache_version = batch.versions_p + start
    c.cache_owner = NULL
    c.gold = NULL
    feasible = None
    if c.forced != NULL and system.constrained and batch.forced[start:end].max() >= 0:
        # presets under a scheme's constraints: a label that passes its own
        # checks may still leave no valid label for a later preset, and a
        # greedy or beam search would walk into that dead end
        feasible = numpy.zeros((n, system.nr_class), dtype="uint8")
        fv = feasible
        system.feasible_steps(c, &fv[0, 0])
        c.feasible = &fv[0, 0]
    return feasible


cdef class _TagDoc(Instance):
    """The C view of one document: its tokens' part of a _TagBatch (atoms,
    and optionally substrings and preset labels), and its gold while
    training. One action per token: the output is a label per token in
    document order."""
    cdef TagDocC c
    cdef TaggingSystem tagging
    cdef _TagBatch batch
    cdef object gold, feasible

    cdef void view(self, TaggingSystem system, _TagBatch batch, int64_t start,
                   int64_t end, gold_array) except *:
        cdef int n = <int>(end - start)
        cdef int[::1] gv
        self.mem = batch.mem
        self.system = system
        self.state_size = system.state_size
        self.tagging = system
        self.batch = batch
        self.length = n
        self.max_steps = n
        self.feasible = view_doc(&self.c, system, batch, start, end)
        self.breaks = self.c.sent_lo != NULL
        if gold_array is not None:
            self.gold = numpy.ascontiguousarray(gold_array, dtype="int32")
            if self.gold.shape != (n,):
                raise ValueError(f"gold has shape {self.gold.shape} for {n} tokens")
            if n and (self.gold.max() >= system.nr_class or self.gold.min() < -1):
                raise ValueError("gold label index out of range")
            if n:
                gv = self.gold
                self.c.gold = &gv[0]
                self.has_gold = True

    cdef int init_state(self, void* state) except -1:
        start_state(<TagStateC*>state, &self.c)
        return 0

    def output(self, actions):
        """The labels in document order (tokens not reached: label 0);
        `actions` itself (left to right) where every token has its label."""
        n = self.c.length
        if len(actions) == n:
            return numpy.ascontiguousarray(actions[::-1]) if self.tagging.rtl else actions
        out = numpy.zeros((n,), dtype="int32")
        k = len(actions)
        if self.tagging.rtl:
            out[n - k:] = actions[::-1]
        else:
            out[:k] = actions
        return out
