"""Differential test: ``suite.tma_model``'s verdicts against the real ``cuTensorMapEncodeTiled``.

Generates descriptors with Hypothesis (the same list for the same ``--count`` and ``--seed``):
a descriptor the model accepts, drawn at and near every documented rule's limit, then 0, 1 or
2 targeted mutations (one step past one rule, or an edge the documentation leaves open:
overlapping strides, a box larger than the tensor, a null address, a ragged rank-1 size...).
It asks the model (``check``) and the driver (through cuda-bindings, in a child process that
may crash without ending the run) about each, and counts:

* agree-ok, agree-reject: the model and the driver say the same;
* model-ok/driver-rejects: no documented rule broken, yet the driver refuses (an undocumented
  rule, or a model bug);
* model-rejects/driver-ok: a documented rule broken, yet the driver accepts (a rule the driver
  does not enforce, or a model bug);
* driver-crashed: the encode killed or hung the process (always a finding).

Every disagreement is a finding. They are grouped by a small key (the rules the model raised or
"none", the driver's result, rank, dtype, interleave, swizzle), and each group gets one
standalone script ``disagreement-<n>.py`` (needs only cuda-bindings and a GPU) that encodes its
first descriptor and prints the model's expectation and the driver's result.

Also run: a rank-1 probe (lengths whose byte size is or is not a multiple of 16, with a null,
byte-size or padded ``globalStrides``), a footprint probe (UINT8 boxes of every representable
size between the largest footprint the 2026-11-22 run saw accepted and the smallest it saw
refused, to pin the shared-memory limit the driver checks boxes against) and three controls
(descriptors whose answer is not in doubt; if the first is refused with the synthetic
addresses, the run moves them onto a real cuMemAlloc).

The model judges each descriptor for the device's compute capability and driver version
(``--compute-capability auto``, the default; ``none`` judges without a target), so its
observed rules (docs/tma-disagreements.md) take part; ``counts_documented`` in the summary
counts the same descriptors against the documented rules alone, the 2026-11-22 model.

    python bench/tma_differential.py --count 10000 --seed 0 --out DIR
    python bench/tma_differential.py --explain DIR

Writes ``DIR/summary.json`` (counts, groups, per-rule confirmation, the probes, the controls,
coverage, timings), ``DIR/disagreements.jsonl`` (every disagreement), ``DIR/records.jsonl``
(every descriptor) and ``DIR/disagreement-<n>.py``. Exit status 0 when it ran (disagreements
are results, not errors), 2 without cuda-bindings, 3 without a usable GPU.

``--explain DIR`` needs no GPU: it reads a run's records (or, for a run that kept only its
disagreements, regenerates the descriptors from the seed and infers the agreeing answers) and
prints, for each hypothesis about why the driver refused what the documented rules allow, how
many refusals it explains and how many accepted descriptors contradict it (``HYPOTHESES``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from suite.cuda import driver as tma_driver  # noqa: E402
from suite.tma_differential.explain import explain, load_run, print_explanation  # noqa: E402
from suite.tma_differential.records import (  # noqa: E402
    AGREE_OK,
    AGREE_REJECT,
    DRIVER_CRASHED,
    MODEL_OK_DRIVER_REJECTS,
    MODEL_REJECTS_DRIVER_OK,
    NOT_ENCODED,
)
from suite.tma_differential.run import AUTO, run  # noqa: E402


def _compute_capability(text: str) -> int | str | None:
    if text == AUTO:
        return AUTO
    if text.lower() == "none":
        return None
    value = int(text.removeprefix("sm_"))
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="descriptors to generate")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed")
    parser.add_argument("--out", type=Path, help="folder for the results")
    parser.add_argument(
        "--compute-capability",
        type=_compute_capability,
        default=AUTO,
        help="target the model judges for: auto (device 0), none, or e.g. 90 / sm_100",
    )
    parser.add_argument(
        "--explain",
        type=Path,
        metavar="DIR",
        help="no GPU: count each hypothesis over the run in DIR (records or disagreements)",
    )
    ns = parser.parse_args(argv)
    if ns.explain is not None:
        print_explanation(explain(load_run(ns.explain)))
        return 0
    if ns.out is None:
        parser.error("--out is required (or --explain DIR)")
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError as exc:
        print(
            f"tma_differential: cuda-bindings is not importable ({exc}); pip install cuda-bindings"
        )
        return 2
    try:
        summary = run(ns.count, ns.seed, ns.out, compute_capability=ns.compute_capability)
    except tma_driver.DriverUnavailable as exc:
        print(f"tma_differential: no usable driver/GPU: {exc}")
        return 3
    for label, key in (("whole model", "counts"), ("documented rules only", "counts_documented")):
        c = summary[key]
        print(
            f"{label}: tried {summary['tried']}: agree-ok {c[AGREE_OK]}, agree-reject "
            f"{c[AGREE_REJECT]}, model-ok/driver-rejects {c[MODEL_OK_DRIVER_REJECTS]}, "
            f"model-rejects/driver-ok {c[MODEL_REJECTS_DRIVER_OK]}, driver-crashed "
            f"{c[DRIVER_CRASHED]}, not-encoded {c[NOT_ENCODED]}"
        )
    print(f"{len(summary['groups'])} groups; model target {summary['model']['compute_capability']}")
    print_explanation(summary["explanation"])
    for entry in summary["classes"][:15]:
        print(
            f"  {entry['count']:>6}  {entry['kind']:<24} rules={entry['rules']:<40} "
            f"driver={entry['driver']}  groups {entry['groups'][:8]}"
        )
    print(f"elapsed {summary['elapsed_s']}; wrote {ns.out}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
