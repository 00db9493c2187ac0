"""Expand reproducers into cases: config x target, each with a readable id.

Configs come from a reproducer's curated sets (its defaults unless sets are
named) or from a user's YAML/TOML file. Every config is checked against the
reproducer's declared space before anything runs, so a typo in a config file
is a one-line error, not a confusing compile failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from suite.api import Config
from suite.engine.described import Described
from suite.engine.discover import Found
from suite.errors import UsageError
from suite.files import load_structured
from suite.toolchain.limits import limits_for


@dataclass(frozen=True)
class CaseSpec:
    """One case to run: a found reproducer, a config, a target, and whether to launch."""

    found: Found
    config: Config
    target: str
    gpu: bool = False

    @property
    def repro(self) -> Described:
        return self.found.repro

    @property
    def case_id(self) -> str:
        return case_id(self.repro, self.target, self.config)


def case_id(repro: Described, target: str, config: Config) -> str:
    return f"{repro.id}[{target}-{repro.case_label(config)}]"


def load_config_file(path: str) -> list[Config]:
    """A YAML or TOML list of configs (TOML: an array of tables named ``configs``)."""
    file = Path(path)
    loaded = load_structured(file, "config file")
    if isinstance(loaded, dict) and "configs" in loaded:
        loaded = loaded["configs"]
    if not isinstance(loaded, list) or not all(isinstance(c, dict) for c in loaded):
        raise UsageError(f"malformed config file {path}: expected a list of configs (mappings)")
    return loaded


def check_targets(targets: Iterable[str]) -> None:
    for target in targets:
        try:
            limits_for(target)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None


def expand_cases(
    found: Sequence[Found],
    targets: Sequence[str] = (),
    sets: Sequence[str] = (),
    configs: Sequence[Config] = (),
    gpu_arch: int | None = None,
) -> list[CaseSpec]:
    """Every case of the selection, in a stable order, without duplicates.

    ``gpu_arch`` is the visible GPU's compute capability when cases should be
    launched; a case launches when its target is that GPU's.
    """
    check_targets(targets)
    named = {s for s in sets if s != "all"}
    unknown = named - {name for item in found for name in item.repro.configs}
    if unknown:
        known = sorted({name for item in found for name in item.repro.configs})
        raise UsageError(
            f"unknown config set(s) {', '.join(sorted(unknown))} (known: {', '.join(known)})"
        )
    specs: list[CaseSpec] = []
    seen: set[str] = set()
    for item in found:
        repro = item.repro
        chosen = list(configs) or _configs_of(repro, sets)
        for config, problems in zip(chosen, repro.problems_of(chosen), strict=True):
            if problems:
                raise UsageError(f"{repro.id}: bad config {config}: {'; '.join(problems)}")
            for target in targets or repro.targets:
                if target not in repro.targets:
                    continue
                launch = (
                    gpu_arch is not None and repro.launches and limits_for(target).arch == gpu_arch
                )
                spec = CaseSpec(item, dict(config), target, launch)
                if spec.case_id not in seen:
                    seen.add(spec.case_id)
                    specs.append(spec)
    return specs


def _configs_of(repro: Described, sets: Sequence[str]) -> list[Config]:
    """The configs of the named sets (the reproducer's defaults, else all, when none is named)."""
    wanted = list(sets) or list(repro.default_sets) or list(repro.configs)
    if "all" in wanted:
        wanted = list(repro.configs)
    return [dict(config) for name in wanted for config in repro.configs.get(name, ())]


def shard(specs: Sequence[CaseSpec], spec: str) -> list[CaseSpec]:
    """Cases of shard ``K/N`` (1-based): every N-th case of the id-sorted list, from the K-th.

    Deterministic for a given selection, so N CI runners split a run with no
    overlap and no gap, and their sizes differ by at most one case.
    """
    if not spec:
        return list(specs)
    try:
        k, n = (int(part) for part in spec.split("/"))
    except ValueError:
        raise UsageError(f"--shard wants K/N, e.g. 1/4, not {spec!r}") from None
    if not 1 <= k <= n:
        raise UsageError(f"--shard {spec}: K must be between 1 and N")
    ordered = sorted(specs, key=lambda s: s.case_id)
    return ordered[k - 1 :: n]
