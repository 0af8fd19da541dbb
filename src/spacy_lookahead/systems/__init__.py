"""The transition systems: what each task tells the engine (core).

* `tagging`  - sequence labelling, one action per token, left to right or
  right to left: the tagger, chunker and NER (Tsuruoka et al. 2011,
  Section 4.1).
* `schemes` (Python) - span labelling schemes (IOB2, BILUO): the actions, the
  constraints the search obeys, spans <-> label ids.
* `span_ids` - label-id sequences -> spans, in C.
* `templates` (Python) - feature templates as data: what a component's
  `features` setting says, compiled for the C extractors.
* `arc_standard` - arc-standard dependency parsing: the system (valid
  actions, static oracle, scores cached across label siblings, the bounds of
  branch-and-bound) and its docs; its state and what each move does to it
  are in `parse_state.pxd`, its features in `parse_features` (templates at
  stack and buffer positions, in two groups, read in C), its fixed feature
  sets as templates in `parser_templates` (Python).
* `phrases`  - filtering-ranking phrase recognition (Carreras et al. 2005):
  the system and its docs; `phrase_doc.pxd` the docs' C arrays,
  `phrase_features` phi_w and phi_p, `phrase_decoders` R(x) (flat and
  embedded DPs).
"""
