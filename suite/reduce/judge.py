"""Candidates judged in parallel by the one interestingness test, each text at most once.

:class:`Judge` keeps ``jobs`` compiles going in the warm isolated workers and answers one
question for the driver: which is the first candidate of a pass's stream, in the stream's
order, that is interesting and smaller? A finished compile starts the next candidate at once
(a batch in lockstep would wait for its slowest: a front-end error takes 0.05 s, a crash in
LLVM ten times that), and a candidate is only ever accepted once every one before it has been
judged, so the answer is the one a single worker would give: deterministic for a seed
whatever ``jobs`` is. A cache of tried texts (by SHA-256) answers a text seen before without
a compile.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol

from suite.engine import Workers
from suite.reduce.interesting import CandidateAnswer, SignatureTest

# How far past the oldest unjudged candidate the judge may start compiles: enough to keep
# every worker busy while one slow compile holds the head, not so far that an accepted
# edit leaves many compiles of the old text behind.
LOOKAHEAD = 4


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ForkingWorkers(Workers):
    """The engine's warm workers, forking a target's candidates even when the template's
    warm-up compile for that target failed.

    The engine then starts a fresh interpreter per case (``Workers.fresh_because``), which
    costs about 0.5 s of Python start and Triton import per candidate (measured: a reduction
    on sm_103 under Triton 3.5.0 went from 159 s to 49 s, 408 compiles either way). The
    warm-up fails for reasons that do not touch a candidate's compile (Triton 3.5.0's ptxas
    knows no ``sm_103a``; the warm-up kernel does not compile under 3.3.x) and the template
    stays alive; the reduced file is judged once more in a fresh interpreter at the end.
    """

    def fresh_because(self, target: str) -> str:
        if not self.execution.warm or self._warm() is not None:
            return ""
        return self.cold_reason or "the warm template could not start"


class Counts(Protocol):
    """Where the judge counts its work (the reducer's ``Progress``)."""

    tries: int  # compiles
    cached: int  # candidates the cache answered
    by_pass: dict[str, list[float]]  # pass name: [compiles, seconds of compile]
    rejected: dict[str, int]  # what the candidates that were not interesting failed with


class Judge:
    """Judges candidates ``jobs`` at a time; see the module's docstring."""

    def __init__(self, test: SignatureTest, jobs: int, counts: Counts) -> None:
        self.test = test
        self.jobs = jobs
        self.counts = counts
        self.cache: dict[str, CandidateAnswer] = {}
        self.label = ""  # the pass the next compiles count for
        self._running: dict[str, Future[CandidateAnswer]] = {}
        self.lock = threading.Lock()  # held while the counts change (and while they are saved)
        self._pool = ThreadPoolExecutor(max_workers=jobs)
        self._serial = itertools.count(1)

    def one(self, text: str) -> CandidateAnswer:
        """Judge ``text`` now, in the calling thread (no cache)."""
        folder = self.test.work / f"c{next(self._serial):06d}"
        folder.mkdir(parents=True, exist_ok=True)
        source = folder / "candidate.py"
        source.write_text(text)
        try:
            return self.test(source, f"{folder.name}-case")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _judged(self, text: str, key: str, label: str) -> CandidateAnswer:
        started = time.monotonic()
        verdict = self.one(text)
        with self.lock:
            self.cache[key] = verdict
            self._running.pop(key, None)
            self.counts.tries += 1
            entry = self.counts.by_pass.setdefault(label, [0, 0.0])
            entry[0] += 1
            entry[1] = round(entry[1] + time.monotonic() - started, 2)
            if not verdict.interesting:
                seen = verdict.signature or verdict.outcome
                self.counts.rejected[seen] = self.counts.rejected.get(seen, 0) + 1
        return verdict

    def _start(self, text: str) -> CandidateAnswer | Future[CandidateAnswer]:
        key = sha(text)
        with self.lock:
            if key in self.cache:
                self.counts.cached += 1
                return self.cache[key]
            running = self._running.get(key)
            if running is None or running.cancelled():
                running = self._pool.submit(self._judged, text, key, self.label)
                self._running[key] = running
            return running

    def first(
        self,
        stream: Iterator[tuple[int, str]],
        wanted: Callable[[str], bool],
        out_of_time: Callable[[], bool],
    ) -> tuple[int, str] | None:
        """The first ``(k, text)`` of ``stream`` that is interesting and ``wanted``; None when
        there is none, or when time ran out first."""
        window: deque[tuple[int, str, CandidateAnswer | Future[CandidateAnswer]]] = deque()
        exhausted = False
        try:
            while True:
                busy = sum(1 for *_, v in window if isinstance(v, Future) and not v.done())
                while not exhausted and busy < self.jobs and len(window) < LOOKAHEAD * self.jobs:
                    item = next(stream, None)
                    if item is None:
                        exhausted = True
                        break
                    verdict = self._start(item[1])
                    window.append((*item, verdict))
                    busy += isinstance(verdict, Future) and not verdict.done()
                if not window:
                    return None
                k, text, head = window[0]
                if isinstance(head, Future) and not head.done():
                    pending = [v for *_, v in window if isinstance(v, Future) and not v.done()]
                    wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                    if out_of_time():
                        return None
                    continue
                window.popleft()
                verdict = head.result() if isinstance(head, Future) else head
                if verdict.interesting and wanted(text):
                    return k, text
        finally:
            # Compiles of candidates that can no longer win: those not started yet are
            # dropped; those running finish into the cache.
            with self.lock:
                for _, text, v in window:
                    if isinstance(v, Future) and v.cancel():
                        self._running.pop(sha(text), None)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
