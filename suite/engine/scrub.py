"""Secrets out of everything the suite writes: scrubbed values, the home folder as ``~``.

Scrubbing comes first, before any normalization: a signature is built from scrubbed
text, so a credential cannot reach a file in a mangled form that no pattern knows.
``scrub_secrets`` is applied at write time to every record a run keeps (results, summary,
JUnit, captured output); ``scrub`` also writes the home folder as ``~``, for reports.

Every pattern takes time linear in the text (a case's output is input: a compiler dump of
megabytes, or ``'a.' * 100000`` made to stall a backtracking pattern): each quantified run
that a later part of a pattern may reject is bounded (a name's piece, a scheme, a key's
header), or begins only where a run of its characters begins (a look-behind), so the work
at one position of the text is bounded too (``bench/scrub_time.py`` measures it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

_SECRET_WORDS = (
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
)
SECRET_NAME = re.compile("|".join(_SECRET_WORDS), re.IGNORECASE)
# Each begins with its literal (a word's start checked behind it): the engine then looks
# for that literal alone, and a pattern costs little where it is absent.
_CREDENTIAL_PATTERNS = (
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"glpat-[A-Za-z0-9_-]{20,}",
    r"A[KS]IA(?<!\w....)[0-9A-Z]{16}\b",
    r"xox[abprs]-[A-Za-z0-9-]{10,}",
    r"sk-(?<!\w...)[A-Za-z0-9_-]{20,}",
    r"hf_(?<!\w...)[A-Za-z0-9]{30,}",
    r"AIza(?<!\w....)[0-9A-Za-z_-]{35}",
    r"eyJ(?<!\w...)[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    # The body stops at the next BEGIN: a thousand BEGINs without an END scan the text once.
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:(?!-----BEGIN )[\s\S])*?"
    r"-----END [A-Z ]{0,40}PRIVATE KEY-----",
    # Long hex (not a 40-digit commit hash) and long base64-ish runs that mix cases and digits.
    r"(?<![0-9A-Za-z])[0-9a-fA-F]{48,}(?![0-9A-Za-z])",
    # An AWS secret access key: exactly 40 characters of base64, '/' included.
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])"
    r"(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
)
CREDENTIAL_VALUES = tuple(re.compile(p) for p in _CREDENTIAL_PATTERNS)
# A long run that may be a random token. Case ids and pass names are long runs too
# ("sm_90-box256-buf256-tx1024-checkTrue-lenragged-gsnull"), so a run counts as random
# only when one of its '-'/'_' pieces is itself long and mixes cases and digits.
_LONG_RUN = re.compile(r"(?<![A-Za-z0-9+_=/-])[A-Za-z0-9+_/-]{40,}={0,2}(?![A-Za-z0-9+_=/-])")
_RANDOM_PIECE_LENGTH = 24


def _looks_random(run: str) -> bool:
    return any(
        len(piece) >= _RANDOM_PIECE_LENGTH
        and re.search(r"[a-z]", piece) is not None
        and re.search(r"[A-Z]", piece) is not None
        and re.search(r"[0-9]", piece) is not None
        for piece in re.split(r"[-_/]", run.rstrip("="))
    )


def _redact_random_runs(text: str) -> str:
    return _LONG_RUN.sub(lambda m: REDACTED if _looks_random(m.group(0)) else m.group(0), text)


def _has_credential(value: str) -> bool:
    if any(credential.search(value) for credential in CREDENTIAL_VALUES):
        return True
    return any(_looks_random(m.group(0)) for m in _LONG_RUN.finditer(value))


# A value after a name: quoted (also as a JSON string holds it, \"...\"), or a run that stops
# at a quote, a backslash or a separator, so that a JSON string around it stays valid.
_VALUE = r"""(\\"(?:[^"\\]|\\[^"])*\\"|"[^"]*"|'[^']*'|[^\s,;&"'<>\\]+)"""
# A name's parts around its secret word are bounded (a name of 64 + 64 characters): each
# start of a word then costs at most a few thousand steps, whatever follows.
_SECRET_ASSIGNMENT = re.compile(
    r"\b([A-Z0-9_]{0,64}(?:" + "|".join(_SECRET_WORDS) + r")[A-Z0-9_]{0,64})(\s*=\s*)" + _VALUE
)
# A name's closing quote: a dict or JSON key (``{'password': ...}``, ``\"token\": ...``).
_KEY_QUOTE = r"""(?:\\?["'])?"""
# Lowercase and mixed-case names too, with '=' or ':' (YAML, headers, URLs' query strings);
# a bare "token" is left alone: "unexpected token: ')'" is a parser's, not a secret.
# The name is its last words (``db.admin_password``: ``password``), which begin where no
# letter or digit stands before them: the words before it are left as they are.
_NAMED_SECRET = re.compile(
    r"(?i)(?<![a-z0-9])(password|passwd|pwd|secret|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token"
    r"|[a-z0-9]{1,64}[_.-]token)(" + _KEY_QUOTE + r"\s*(?:=|:(?!:))\s*)" + _VALUE
)
# A command line's secret: ``--password X``, ``--api-key X``, ``sshpass -p X``.
_FLAG_SECRET = re.compile(
    r"(?i)(-(?<![\w-]-)-?(?:[a-z0-9]{1,32}-){0,4}(?:password|passwd|pass|secret|token|api-key"
    r"|access-key|secret-key|private-key|client-secret)\s+)" + _VALUE
)
_SSHPASS = re.compile(r"(sshpass(?<!\wsshpass)\s+(?:-[a-oq-z]\s+\S+\s+){0,4}-p\s*)" + _VALUE)
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)(?:(bearer|basic|token|digest)\s+)?"
    r"([^\s\"'\\<>,;]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
# A URL's user and password hold no '"' or backslash (RFC 3986): they end in a JSON string.
_URL_CREDENTIALS = re.compile(
    r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://)[^/\s:@\"\\]+:[^/\s@\"\\]+@"
)
_CALL = re.compile(r"[A-Za-z_][\w.]*\(")
REDACTED = "[redacted]"
#: Variables worth showing in a report: what changes what Triton compiles (its knobs, MLIR's
#: and LLVM's debug switches). Not CUDA_* or NVIDIA_*: a GPU machine sets dozens, some of
#: several kilobytes, and the GPU, driver and CUDA are facts of the environment already.
RELEVANT_PREFIXES = ("TRITON_", "MLIR_", "LLVM_")
#: A value longer than this is shown by its head and its length.
VALUE_CHARS = 120


# A value of this process's environment under a secret-like name (``DB_PASSWORD``), shown
# bare by a case that printed it, is redacted wherever it appears; a short one ("1", "yes")
# or a path (``SSH_AUTH_SOCK``) says nothing and is left.
_SHORTEST_SECRET = 8


@lru_cache(maxsize=1)
def _environment_secrets() -> tuple[str, ...]:
    values = {
        value
        for name, value in os.environ.items()
        if SECRET_NAME.search(name)
        and len(value) >= _SHORTEST_SECRET
        and not value.startswith(("/", "~"))
        and value.strip() == value
    }
    return tuple(sorted(values, key=len, reverse=True))


def _redact_environment_secrets(text: str) -> str:
    for value in _environment_secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def home_to_tilde(text: str) -> str:
    home = str(Path.home())
    return text.replace(home, "~") if home not in ("", "/") else text


def _code(name: str, value: str) -> bool:
    """A kernel's ``offs_token = tl.load(sorted_token_ids_ptr + offs)``: a name that only
    ends in ``token`` (not an auth, access or refresh token) given a function call."""
    lowered = name.lower()
    generic = lowered.endswith("token") and not re.search(
        r"(auth|access|refresh)[_-]?token$", lowered
    )
    return generic and bool(_CALL.match(value))


def scrub_secrets(text: str) -> str:
    """``text`` without credential-looking values (paths left as they are)."""
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _AUTH_HEADER.sub(
        lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + REDACTED, text
    )
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    for command_line in (_FLAG_SECRET, _SSHPASS):
        text = command_line.sub(lambda m: m.group(1) + REDACTED, text)
    text = _redact_environment_secrets(text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)
    text = _NAMED_SECRET.sub(
        lambda m: (
            m.group(0)
            if m.group(3) == REDACTED or _code(m.group(1), m.group(3))
            else m.group(1) + m.group(2) + REDACTED
        ),
        text,
    )
    for credential in CREDENTIAL_VALUES:
        text = credential.sub(REDACTED, text)
    return _redact_random_runs(text)


def scrub_text(text: str) -> str:
    """``text`` without credential-looking values and with the home folder as ``~``."""
    return home_to_tilde(scrub_secrets(text))


def scrub_tree(value: Any) -> Any:
    """Every string in a JSON-like value (mappings' keys too, lists) through
    :func:`scrub_secrets`."""
    if isinstance(value, str):
        return scrub_secrets(value)
    if isinstance(value, Mapping):
        return {scrub_tree(k): scrub_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_tree(v) for v in value]
    return value


def looks_secret(name: str, value: str) -> bool:
    return bool(SECRET_NAME.search(name) or _has_credential(value))


def safe_variables(variables: Mapping[str, Any]) -> dict[str, str]:
    """The variables that are safe to show: secret-like names and values dropped, ``~`` home."""
    return {
        name: home_to_tilde(str(value))
        for name, value in sorted(variables.items())
        if not looks_secret(name, str(value))
    }


def capture_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``environ`` (this process's by default) that bear on a compile
    (``RELEVANT_PREFIXES``), made safe, each value at most about ``VALUE_CHARS``."""
    environ = os.environ if environ is None else environ
    relevant = {k: v for k, v in environ.items() if k.startswith(RELEVANT_PREFIXES)}
    return {name: _shortened(value) for name, value in safe_variables(relevant).items()}


def _shortened(value: str) -> str:
    if len(value) <= VALUE_CHARS:
        return value
    return f"{value[: VALUE_CHARS - 20]}... [{len(value)} chars]"


def safe_facts(value: Any) -> Any:
    """The environment facts of a run, with every secret-like key or value dropped."""
    if isinstance(value, Mapping):
        return {
            str(k): safe_facts(v)
            for k, v in value.items()
            if not (isinstance(v, str) and looks_secret(str(k), v)) and not SECRET_NAME.search(k)
        }
    if isinstance(value, list):
        return [safe_facts(v) for v in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value
