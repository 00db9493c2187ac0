"""The scrubber's two promises, as properties (issue 14).

- What names things survives unchanged: every case id the built-in and upstream reproducers
  expand to (curated configs and configs drawn from their declared spaces), every 40-digit
  commit hash, every MLIR pass name the installed Triton registers, every path in the
  repository. A redacted case id broke a report lookup once.
- Real credential shapes are always redacted: in plain text, inside JSON strings (which stay
  valid JSON), and through the classifier into the signature, which never depends on the
  credential's value.
"""

from __future__ import annotations

import base64
import json
import mmap
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite.engine.classify import classify
from suite.engine.discover import catalogue
from suite.engine.expand import case_id, expand_cases
from suite.engine.isolate import BoundedOutput, Exit
from suite.engine.runner import _events, _scrubbed
from suite.engine.scrub import REDACTED, scrub_secrets, scrub_text, scrub_tree
from suite.replay.pipeline import NAME_PREFIXES
from suite.toolchain.limits import limits_for
from tests.conftest import SHARED_CACHE

ROOT = Path(__file__).resolve().parent.parent
PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"


def survives(text: str) -> None:
    """``text`` unchanged by both scrubbers, alone, in a sentence and inside JSON."""
    for shown in (text, f"see {text} for details", json.dumps({"id": text, "of": [text]})):
        assert scrub_secrets(shown) == shown
        if str(Path.home()) + "/" not in shown:
            assert scrub_text(shown) == shown


# What names things.
# ---------------------------------------------------------------------------------------------

REPROS = [found.repro for found in catalogue()]
CURATED_IDS = [spec.case_id for spec in expand_cases(catalogue(), sets=["all"])]


def test_every_curated_case_id_survives():
    assert len(CURATED_IDS) > 100
    assert any(i.startswith("cuda-tma-1d[") and i.endswith("-gsnull]") for i in CURATED_IDS)
    for identifier in CURATED_IDS:
        survives(identifier)


@st.composite
def drawn_case_ids(draw: st.DrawFn) -> str:
    """A case id from any point of a reproducer's declared space (constraints aside)."""
    repro = draw(st.sampled_from(REPROS))
    config = {p.name: draw(st.sampled_from(p.values)) for p in repro.params}
    return case_id(repro, draw(st.sampled_from(repro.targets)), config)


@PROPERTY
@given(drawn_case_ids())
def test_any_case_id_of_the_declared_spaces_survives(identifier):
    survives(identifier)


@PROPERTY
@given(st.text(alphabet="0123456789abcdef", min_size=40, max_size=40))
def test_any_commit_hash_survives(commit):
    survives(commit)
    survives(f"fixed by {commit[:12]} ({commit})")


def test_every_commit_of_this_repository_survives():
    listed = subprocess.run(
        ["git", "log", "--all", "--format=%H %h"], cwd=ROOT, capture_output=True, text=True
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for line in listed.stdout.splitlines():
        survives(line)


def test_every_path_of_the_repository_survives():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    paths = listed.stdout.splitlines() if listed.returncode == 0 else []
    paths = paths or [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")]
    assert len(paths) > 50
    for path in paths:
        survives(path)
        survives(str(ROOT / path))
        survives(f'  File "{ROOT / path}", line 12, in compile_case')


def _triton_pass_names() -> list[str]:
    """The pass names (``tritongpu-assign-latencies``) and pass classes
    (``TritonGPUAssignLatencies``) in the installed Triton's library, read once per build
    (a scan of its 500 MB takes seconds) and kept in the shared cache."""
    triton = pytest.importorskip("triton")
    library = Path(triton.__file__).parent / "_C" / "libtriton.so"
    if not library.is_file():
        pytest.skip("no libtriton.so")
    stat = library.stat()
    kept = SHARED_CACHE / "scrub-test" / f"passes-{stat.st_size}-{int(stat.st_mtime)}.json"
    if kept.is_file():
        return json.loads(kept.read_text())
    prefixes = [f"{p}-" for p in NAME_PREFIXES] + ["TritonGPU", "TritonNvidiaGPU", "NVWS"]
    names: set[str] = set()
    with open(library, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        for prefix in prefixes:
            import re

            for found in re.finditer(re.escape(prefix.encode()) + rb"[A-Za-z0-9-]+\x00", m):
                if found.start() and m[found.start() - 1] == 0:
                    names.add(found.group()[:-1].decode())
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}")
    partial.write_text(json.dumps(sorted(names)))
    os.replace(partial, kept)
    return sorted(names)


@pytest.mark.triton(">=3.4")  # tritongpu-assign-latencies: first in 3.4.0's libtriton.so
def test_every_mlir_pass_name_survives():
    names = _triton_pass_names()
    assert "tritongpu-assign-latencies" in names
    assert len(names) > 100
    for name in names:
        survives(name)
        survives(f"{name}{{num-stages=2}}")
        survives(f"compiler-error:ttgir:{name}: PassManager::run failed")


# Credentials.
# ---------------------------------------------------------------------------------------------


def _text(alphabet: str, size: int, most: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size if most is None else most)


def _mixed(text: str) -> bool:
    return (
        any(c.islower() for c in text)
        and any(c.isupper() for c in text)
        and any(c.isdigit() for c in text)
    )


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@st.composite
def jwts(draw: st.DrawFn) -> str:
    claims = draw(st.dictionaries(st.sampled_from(["sub", "iat", "name", "scope"]), ALNUMS))
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"exp": 1, **claims}).encode())
    return f"{header}.{payload}.{_b64url(draw(st.binary(min_size=32, max_size=32)))}"


ALNUMS = _text(ALNUM, 8, 16)
# Each: (the credential as it appears, the part that must not survive).
CREDENTIALS: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "github": st.tuples(st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _text(ALNUM, 36))
    .map(lambda p: p[0] + p[1])
    .map(lambda t: (t, t)),
    "github-fine-grained": st.tuples(_text(ALNUM, 22), _text(ALNUM, 59))
    .map(lambda p: f"github_pat_{p[0]}_{p[1]}")
    .map(lambda t: (t, t)),
    "gitlab": _text(ALNUM + "_-", 20).map(lambda s: (f"glpat-{s}", f"glpat-{s}")),
    "aws-access-key": st.tuples(
        st.sampled_from(["AKIA", "ASIA"]), _text(string.ascii_uppercase + string.digits, 16)
    )
    .map(lambda p: p[0] + p[1])
    .map(lambda t: (t, t)),
    # A secret access key: 40 characters of base64, '/' among them, alone on a line.
    "aws-secret": _text(BASE64, 40).filter(lambda s: "/" in s and _mixed(s)).map(lambda s: (s, s)),
    "aws-secret-named": _text(BASE64, 40).map(lambda s: (f"aws_secret_access_key = {s}", s)),
    "slack": st.tuples(
        st.sampled_from("abprs"),
        _text(string.digits, 12),
        _text(string.digits, 12),
        _text(ALNUM, 24),
    ).map(lambda p: (f"xox{p[0]}-{p[1]}-{p[2]}-{p[3]}",) * 2),
    "openai": st.tuples(st.sampled_from(["sk-", "sk-proj-"]), _text(ALNUM, 48))
    .map(lambda p: p[0] + p[1])
    .map(lambda t: (t, t)),
    "huggingface": _text(string.ascii_letters, 34).map(lambda s: (f"hf_{s}", f"hf_{s}")),
    "jwt": jwts().map(lambda t: (t, t)),
    "url": st.tuples(
        st.sampled_from(["https", "http", "git+ssh", "postgres", "redis"]),
        _text(ALNUM + "._-", 3, 12),
        _text(ALNUM + "._~!$&'()*+,;=%-", 8, 24),
    ).map(lambda p: (f"{p[0]}://{p[1]}:{p[2]}@example.com/repo.git", p[2])),
    "authorization": st.tuples(
        st.sampled_from(["Authorization", "authorization", "Proxy-Authorization"]),
        st.sampled_from(["Bearer", "Basic", "token", "bearer"]),
        _text(ALNUM + "._~+/=-", 16, 48),
    ).map(lambda p: (f"{p[0]}: {p[1]} {p[2]}", p[2])),
    "bearer": _text(ALNUM + "._~+/-", 16, 48).map(lambda s: (f"Bearer {s}", s)),
    "password": st.tuples(
        st.sampled_from(["password", "passwd", "db_password", "Password", "pwd"]),
        st.sampled_from(["=", ": ", " = "]),
        _text(ALNUM + "!#$%()*+-./:?@[]^_{|}~", 8, 24),
    ).map(lambda p: (f"{p[0]}{p[1]}{p[2]}", p[2])),
}
KINDS = sorted(CREDENTIALS)
AROUND = st.sampled_from(
    [
        ("", ""),
        ("RuntimeError: leaked ", " while compiling"),
        ("config loaded: ", "\nnext line"),
        ("  ", ","),
        ("(", ")"),
    ]
)


@PROPERTY
@given(st.sampled_from(KINDS).flatmap(lambda k: CREDENTIALS[k]), AROUND)
def test_a_credential_is_always_redacted(credential, around):
    shown, secret = credential
    text = around[0] + shown + around[1]
    for clean in (scrub_secrets(text), scrub_text(text)):
        assert secret not in clean, clean
        assert REDACTED in clean


@PROPERTY
@given(st.sampled_from(KINDS).flatmap(lambda k: CREDENTIALS[k]), AROUND)
def test_a_credential_inside_a_json_string_is_redacted_and_the_json_stays_valid(credential, around):
    shown, secret = credential
    document = json.dumps({"message": around[0] + shown + around[1], "n": 1}, indent=2)
    clean = scrub_secrets(document)
    assert secret not in clean
    assert secret not in json.dumps(json.loads(clean))
    assert json.loads(clean)["n"] == 1
    # A tree of records (results.jsonl, events) scrubbed value by value.
    tree = scrub_tree({"error": {"message": around[0] + shown + around[1]}, "list": [shown]})
    assert secret not in json.dumps(tree) and secret not in str(tree)


def _signature(message: str, tmp_path: Path) -> tuple[str, str]:
    """The signature and message the engine gives a compile that raised ``message`` (and
    printed it), through the runner's own order: scrub, then classify."""
    report = tmp_path / "events.jsonl"
    error = {
        "event": "error",
        "phase": "compile",
        "type": "RuntimeError",
        "message": message,
        "frames": [],
        "traceback": f"Traceback (most recent call last):\nRuntimeError: {message}\n",
    }
    events = [{"event": "start"}, {"event": "phase", "phase": "compile"}, error]
    report.write_text("".join(json.dumps(e) + "\n" for e in events))
    stderr = f"error: {message}\nLLVM ERROR: {message}\n"
    exit = Exit(
        1, False, False, 0, 0.1, BoundedOutput("", 0, 0), BoundedOutput(stderr, len(stderr), 0)
    )
    verdict = classify(_events(report), _scrubbed(exit), limits_for("sm_90"))
    return str(verdict.signature), verdict.message


@PROPERTY
@given(st.data())
def test_the_signature_never_holds_a_credential_nor_depends_on_one(tmp_path_factory, data):
    kind = data.draw(st.sampled_from(KINDS))
    (one, secret), (_, another) = data.draw(CREDENTIALS[kind]), data.draw(CREDENTIALS[kind])
    around = data.draw(AROUND)
    tmp_path = tmp_path_factory.mktemp("signature")
    signature, message = _signature(around[0] + one + around[1], tmp_path)
    assert secret not in signature and secret not in message
    # Normalized from scrubbed text: no mangled form of it either, since another value in
    # the same place gives the very same signature.
    other = around[0] + one.replace(secret, another) + around[1]
    assert _signature(other, tmp_path)[0] == signature


def test_a_kernel_variable_named_like_a_token_is_code_not_a_secret():
    """A fused-MoE kernel's ``offs_token = tl.load(...)`` survives (a reproducer generated
    from it once had the load redacted and did not parse); a value after a token's name
    that is not a call is still redacted."""
    line = "    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)"
    assert scrub_secrets(line) == line
    assert REDACTED in scrub_secrets("my_token = abc123def456")
    assert REDACTED in scrub_secrets("auth_token = load(x)")


# Text a case may print or raise to stall a backtracking pattern (issue 36): 100 KB each.
# The scrubber of 0f91f3c took 128 s on 'a.' * 16000 alone, growing with the square.
ADVERSARIAL = ("'a.' * 50000", "'a-' * 50000")


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_text_is_scrubbed_in_linear_time(text):
    """Each is scrubbed in a child within a bound a quadratic scrubber misses by minutes
    (seconds here; minutes of slack against a loaded machine, never a timing assertion)."""
    code = f"from suite.engine.scrub import scrub_secrets; scrub_secrets({text})"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=90)


@pytest.mark.parametrize(
    "text, secret",
    [
        ("{'password': 'hunter2-in-a-dict'}", "hunter2-in-a-dict"),
        ('{"db_password": "hunter2-json"}', "hunter2-json"),
        ("mysql --password hunter2-flag -h db", "hunter2-flag"),
        ("tool --api-key 'hunter2-quoted' run", "hunter2-quoted"),
        ("sshpass -p hunter2-sshpass ssh build@host", "hunter2-sshpass"),
        ("sshpass -p 'hunter2 spaced' ssh build@host", "hunter2 spaced"),
    ],
)
def test_everyday_secret_forms_are_redacted(text, secret):
    assert secret not in scrub_secrets(text)


def test_the_bare_value_of_a_secret_variable_is_redacted():
    """A case that prints ``os.environ['DEPLOY_SECRET']`` alone shows no name to go by."""
    code = (
        "from suite.engine.scrub import scrub_secrets; print(scrub_secrets('got s3cr3t-value-42'))"
    )
    env = {**os.environ, "DEPLOY_SECRET": "s3cr3t-value-42", "UNRELATED": "plain-value-42"}
    shown = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == "got [redacted]"
