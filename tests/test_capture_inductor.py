"""``repro capture`` records the launches of the kernels torch.compile (Inductor) generates:
Inductor launches through its ``CachingAutotuner.run`` and a launcher of its own, never
``JITFunction.run``. Needs a GPU (Inductor emits C++, not Triton, for a CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_capture import PROGRAMS, capture


@pytest.mark.gpu
@pytest.mark.long
def test_an_inductor_kernel_launch_is_recorded(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from suite.capture.site.repro_capture_records import load_last_launches

    program = PROGRAMS / "gpu_inductor_launch.py"
    done, summary = capture(tmp_path / "r", [sys.executable, str(program)], "--no-confirm")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "max abs error against eager" in done.stdout
    folder = Path(summary["folder"])
    errors = folder / "hook-errors.txt"
    assert not errors.exists(), errors.read_text()
    launches = [record for _, record in load_last_launches(folder / "last-launch").values()]
    inductor = [r for r in launches if r.kernel.name.startswith("triton_")]
    assert inductor, [r.kernel.name for r in launches]
    latest = inductor[-1]
    # The second call's launch: the config is chosen, its block size a constexpr.
    assert sorted(latest.tensors) and all(t.shape == [3000] for t in latest.tensors.values())
    assert any(name.endswith("BLOCK") for name in latest.constexprs), latest.constexprs
    assert "num_warps" in latest.options
    assert latest.grid[0] >= 1 and "the grid could not be evaluated" not in latest.problems
    assert latest.problems == [], latest.problems
    kernel = latest.kernel.functions[-1]  # the kernel last: its source, carried over
    assert kernel.name == latest.kernel.name and "def triton_" in kernel.text


@pytest.mark.gpu
@pytest.mark.long
def test_a_training_step_allocates_the_same_under_capture(tmp_path: Path) -> None:
    """What the hook keeps of Inductor's launches changes nothing the program does: a
    gradient an Inductor kernel wrote is taken over by autograd, not copied because the
    hook still held it, so a training step makes as many CUDA allocations under capture
    as alone. Once warm, every kernel of the step is kept by reference alone (steady), and
    the launches kept at the end are described with their first launch's arguments."""
    pytest.importorskip("torch")
    command = [sys.executable, str(PROGRAMS / "gpu_inductor_training.py")]
    plain = subprocess.run(command, capture_output=True, text=True, check=False)
    assert plain.returncode == 0, plain.stderr[-3000:]
    done, summary = capture(tmp_path / "r", command, "--no-confirm")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (Path(summary["folder"]) / "hook-errors.txt").exists()
    [said] = [line for line in plain.stdout.splitlines() if line.startswith("allocations")]
    assert said in done.stdout.splitlines(), (said, done.stdout)
    kept = [
        json.loads(f.read_text()) for f in (Path(summary["folder"]) / "kept-launches").glob("*")
    ]
    [records] = [rs for rs in kept if len(rs) == 8]  # the program's (a compile worker's: fewer)
    assert all(r["kernel"]["name"].startswith("triton_") for r in records), records
    assert all("kept by the kernel alone" in " ".join(r["problems"]) for r in records), records
    assert all(r["tensors"] and r["grid"][0] >= 1 for r in records), records


def test_the_hook_wraps_inductors_launch_entry_when_the_program_imports_it(tmp_path: Path) -> None:
    """On this CPU machine Inductor generates no Triton kernel, but its runtime module is
    real: imported by the program (which imports triton on the way), its
    ``CachingAutotuner.run`` is hooked once, by Torch's own code compiled again with the
    hook's bookkeeping in it (no frame of the hook's), and the hook wrote no error."""
    pytest.importorskip("torch._inductor.runtime.triton_heuristics")
    program = tmp_path / "imports_inductor.py"
    program.write_text(
        "import torch._inductor.runtime.triton_heuristics as heuristics\n"
        "run = heuristics.CachingAutotuner.run\n"
        "print('wrapped', getattr(run, '_repro_capture', False), run.__name__)\n"
        "print('inlined', run.__code__.co_filename == heuristics.__file__)\n"
    )
    done, summary = capture(tmp_path / "r", [sys.executable, str(program)], "--no-confirm")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "wrapped True run" in done.stdout
    assert "inlined True" in done.stdout  # Torch's own run, the hook compiled into it
    assert not (Path(summary["folder"]) / "hook-errors.txt").exists()
