"""The differential harness: the TMA model's verdicts against the real
``cuTensorMapEncodeTiled`` (``bench/tma_differential.py`` is its command line).

Descriptors the model accepts (:mod:`.descriptors`), mutated one step past a rule or onto an
edge the documentation leaves open (:mod:`.generator`); the bookkeeping and the standalone
script of each disagreement (:mod:`.records`); the rank-1, control and footprint probes
(:mod:`.probes`); the hypotheses that explain a run (:mod:`.explain`); the run itself
(:mod:`.run`). A package above the engine (it writes through :mod:`suite.templating`), while
the model it judges (``suite.cuda``) is below it, where the engine's triage names its rules.
"""
