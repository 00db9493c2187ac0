"""compile_kernel's specialization and the form each Triton release takes, on real compiles."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suite.api import _has
from suite.judgement import source_form
from suite.tritonc import specialization
from tests.conftest import RELEASES, per_release

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "writing-reproducers.md"

# Compiles a small kernel three ways in whatever interpreter runs it and prints, for each
# way, the kernel arguments of the TTIR and whether each carries tt.divisibility.
PROBE = textwrap.dedent(
    """
    import json, os, re, sys, tempfile
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from suite.judgement import source_form
    from suite.tritonc import _ast_source, specialization

    @triton.jit
    def scale(x_ptr, y_ptr, n, stride, factor, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        values = tl.load(x_ptr + offsets * stride, mask=mask)
        tl.store(y_ptr + offsets * stride, values * factor, mask=mask)

    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "stride": "i32", "factor": "fp32"}
    ways = {"default": {}, "none": {"divisible": ()},
            "override": {"divisible": ["x_ptr"], "equal_to_1": ["stride"]}}
    seen = {"form": source_form()}
    for name, options in ways.items():
        spec = specialization(signature, **options)
        source = _ast_source(scale, dict(signature), {"BLOCK": 128}, spec)
        kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        head = next(line for line in kernel.asm["ttir"].splitlines() if "tt.func" in line)
        head = re.sub(r" loc\\([^)]*\\)", "", head)
        args = re.findall(r"%\\w+: ([^,{)]+?)\\s*(\\{[^}]*\\})?[,)]", head)
        seen[name] = [[kind.strip(), "tt.divisibility = 16" in attrs] for kind, attrs in args]
    print(json.dumps(seen))
    """
)

POINTER, INT, FLOAT = "!tt.ptr<f32>", "i32", "f32"
EXPECTED = {
    # what kernel[grid](...) gives 16-byte-aligned tensors and sizes divisible by 16
    "default": [[POINTER, True], [POINTER, True], [INT, True], [INT, True], [FLOAT, False]],
    "none": [[POINTER, False], [POINTER, False], [INT, False], [INT, False], [FLOAT, False]],
    # stride == 1 is folded away, as the JIT folds an integer argument equal to 1
    "override": [[POINTER, True], [POINTER, False], [INT, False], [FLOAT, False]],
}


def probe(python: str, folder: Path) -> dict:
    script = folder / "specialization_probe.py"  # @triton.jit needs its source in a file
    script.write_text(PROBE)
    proc = subprocess.run(
        [python, str(script)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def documented_forms() -> dict[str, str]:
    """The release -> form table of docs/writing-reproducers.md."""
    rows = re.findall(r"^\|\s*(3\.\d+\.\d+)\s*\|\s*`(\w[\w-]*)`", DOC.read_text(), re.M)
    assert rows, "the form table is missing from docs/writing-reproducers.md"
    return dict(rows)


def test_specialization_defaults_to_what_the_jit_gives_aligned_arguments():
    spec = specialization({"x": "*fp16", "n": "i32", "m": "i64", "f": "fp32", "b": "i1"})
    assert set(spec.attrs) == {"x", "n", "m"}
    assert specialization({"x": "*fp16"}, divisible=()).attrs == {}
    with pytest.raises(TypeError, match="not in the signature"):
        specialization({"x": "*fp16"}, divisible=["y"])


def test_installed_release_compiles_each_specialization(tmp_path):
    seen = probe(sys.executable, tmp_path)
    assert seen["form"] == documented_forms()[_installed()]
    for way, args in EXPECTED.items():
        assert seen[way] == args, way


@pytest.mark.venv
@pytest.mark.parametrize("release", ["3.0.0", "3.2.0", "3.3.0"])
def test_old_release_compiles_each_specialization(release, tmp_path):
    from suite.toolchain.venvs import for_version

    seen = probe(str(for_version(release).python), tmp_path)
    assert seen["form"] == documented_forms()[release]
    for way, args in EXPECTED.items():
        assert seen[way] == args, (release, way)


@pytest.mark.venv
@pytest.mark.parametrize("release", ["3.0.0", "3.2.0", "3.3.1"])
def test_the_warm_up_compiles_under_releases_that_read_only_module_globals(release):
    """3.0-3.3 resolve a kernel's names in its module's globals: a kernel defined in a
    function failed with NameError('tl is not defined') and every case ran fresh."""
    from suite.toolchain.venvs import for_version

    proc = subprocess.run(
        [
            str(for_version(release).python),
            "-c",
            "from suite.tritonc import warm_up; warm_up(80); warm_up(90); print('warm')",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=600,
        check=False,
    )
    assert proc.stdout.strip() == "warm", proc.stderr[-2000:]


def test_form_table_names_every_form_and_release():
    table = documented_forms()
    assert set(table) >= {"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.9.0"}
    assert set(table) == set(RELEASES)


@pytest.mark.venv
@pytest.mark.parametrize("release", per_release(RELEASES))
def test_form_table_matches_the_release(release):
    """Each row against the release's venv (two rows whose form others share, 3.7.0 and 3.8.0,
    are the nightly's: no default test needs their venvs)."""
    from suite.toolchain.venvs import for_version

    form = documented_forms()[release]
    python = sys.executable if release == _installed() else str(for_version(release).python)
    proc = subprocess.run(
        [python, "-c", "from suite.judgement import source_form; print(source_form())"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.stdout.strip() == form, (release, proc.stderr[-500:])


@pytest.mark.triton(">=3.4")  # warp_specialize and make_tensor_descriptor: new in 3.4
def test_requires_probes_on_the_installed_release():
    assert _has("triton.language.range(warp_specialize)")
    assert not _has("triton.language.range(no_such_keyword)")
    assert not _has("triton.language.no_such_function(x)")
    assert _has(f"triton=={_installed()}")
    assert _has("triton>=3.0,<99")
    assert not _has("triton<3.0")
    assert _has("ptxas:sm_90a")
    assert not _has("ptxas:sm_999a")
    assert _has("triton.language.make_tensor_descriptor")


@pytest.mark.triton(">=3.3")  # the form table: 3.3.0 is the first `constexprs` release
def test_source_form_is_probed_not_read_from_the_version():
    assert source_form() == "constexprs"


def _installed() -> str:
    import triton

    return triton.__version__.split("+")[0]
