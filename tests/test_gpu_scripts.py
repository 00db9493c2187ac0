"""The GPU machine's scripts (``bench/*.sh``) keep what the caller put on ``PYTHONPATH``.

The device carries wheels the suite needs (tomlkit, jsonschema, ...) on ``PYTHONPATH``; a
script that set it to the checkout alone ran its programs without them (``No module named
'tomlkit'``, 2026-11-26). Each script's ``export PYTHONPATH=`` line is run by bash here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = {
    path.name: line
    for path in sorted((ROOT / "bench").rglob("*.sh"))
    for line in path.read_text().splitlines()
    if re.match(r"\s*export PYTHONPATH=", line)
}


def test_the_gpu_scripts_set_pythonpath():
    assert {"capture_gpu.sh", "variants_gpu.sh", "closure_gpu.sh"} <= set(EXPORTS)


@pytest.mark.parametrize("script", sorted(EXPORTS))
def test_a_script_puts_the_checkout_first_and_keeps_the_callers_paths(script):
    carried = "/carried/wheels:/more"
    shown = subprocess.run(
        ["bash", "-c", f'{EXPORTS[script]}\nprintf %s "$PYTHONPATH"'],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": carried},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown == f"{ROOT}:{carried}"
