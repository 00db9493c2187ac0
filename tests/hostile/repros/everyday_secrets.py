"""Secrets in the forms people print them (issue 36): a dict with quoted keys, a command
line with ``--password X`` and ``sshpass -p X``, the bare value of ``HOSTILE_DEPLOY_SECRET``
(set by the probe). Each value is built at run time: this file's text holds none of them."""

import os

from suite import Choice, Reproducer

PIECES = ("hunter2", "-everyday")
VALUES = tuple(f"{''.join(PIECES)}-{form}" for form in ("dict", "flag", "sshpass"))

REPRO = Reproducer(
    id="hostile-everyday-secrets",
    title="prints secrets as people do",
    family="hostile",
    params=(Choice("n", (0,)),),
    configs={"one": [{"n": 0}]},
    targets=("sm_90",),
)


@REPRO.compile
def compile_case(case):
    password, flag, sshpass = VALUES
    print({"password": password, "user": "build"})
    print(f"running: mysql --password {flag} -h db")
    print(f"running: sshpass -p {sshpass} ssh build@host")
    print(f"deploying with {os.environ.get('HOSTILE_DEPLOY_SECRET', '')}")
    raise RuntimeError(f"login failed for {{'password': '{password}'}}")
