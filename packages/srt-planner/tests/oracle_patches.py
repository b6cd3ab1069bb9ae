"""Recipe patches of the oracle comparison (used by test_oracle.py).

``srtctl validate`` refuses some fields of the reference's recipes on purpose: fields srt does not
execute yet, and data it cannot fetch at run time (a tokenizer that is not on disk). Those refusals
are about running a job, not about planning one, so before an oracle recipe is loaded the test
applies the patches below, as ``--set`` / ``--unset`` overrides on the migrated v2 document. Each
patch is a ``recipe-patch`` row of docs/deviations.md (named by the recipe path it patches); a patch
applies only to recipes that have the refused value, and every application must be needed (the
recipe must fail to load, at one of the patch's ``refused`` paths, without it). A patched benchmark
value that reaches the benchmark comparison is expected to be the placeholder (``expected``), not
the reference's value, and worker environment the reference derived from a dropped value is not
expected (``reference_env``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import yaml

from srt_schema.cluster import ClusterConfig
from srt_schema.load import LoadedJob, load_recipe_text
from srt_schema.setpaths import PathOverride

__all__ = [
    "PATCHES",
    "Patch",
    "applicable",
    "expected_bench",
    "load_patched",
    "reference_env",
]


class Patch(NamedTuple):
    #: Whether the migrated v2 document has the value srt refuses.
    applies: Callable[[dict[str, Any]], bool]
    overrides: tuple[PathOverride, ...]
    #: The ``$.paths`` srtctl validate reports when the patch is left out.
    refused: tuple[str, ...]
    #: Benchmark record keys (oracle_bench) whose value is then the placeholder.
    expected: tuple[tuple[str, str], ...] = ()
    #: Reference worker environment variables that only the patched value sets (a full match):
    #: they are removed from the reference side, so ours must not set them either.
    reference_env: str = ""


#: Keyed by the ``recipe-patch`` row's name. None is needed now: the hub model's tokenizer, the
#: tokenizer classes and the Mooncake trace download are all built (issue 28), so every oracle
#: recipe loads as the reference wrote it. A future refusal that is about running a job, not
#: planning one, adds its patch here with its docs/deviations.md row.
PATCHES: dict[str, Patch] = {}


def applicable(text: str, rows: Sequence[str]) -> tuple[str, ...]:
    """The patch rows that apply to migrated recipe ``text``."""
    unknown = sorted(set(rows) - set(PATCHES))
    assert not unknown, f"docs/deviations.md: no recipe patch implements rows {unknown}"
    doc = yaml.safe_load(text)
    return tuple(name for name in rows if PATCHES[name].applies(doc))


def load_patched(
    text: str, *, file: str, cluster: ClusterConfig, patches: Sequence[str]
) -> tuple[LoadedJob, ...]:
    """Load migrated recipe ``text`` with the named patches applied."""
    overrides = [o for name in patches for o in PATCHES[name].overrides]
    return load_recipe_text(text, file=file, cluster=cluster, overrides=overrides)


def reference_env(patches: Sequence[str], env: dict[str, str]) -> dict[str, str]:
    """The reference worker ``env`` without the variables of the patched-away values."""
    patterns = [PATCHES[name].reference_env for name in patches if PATCHES[name].reference_env]
    return {k: v for k, v in env.items() if not any(re.fullmatch(p, k) for p in patterns)}


def expected_bench(patches: Sequence[str]) -> dict[str, str]:
    """Benchmark record keys whose expected value is a patch's placeholder."""
    out: dict[str, str] = {}
    for name in patches:
        out |= dict(PATCHES[name].expected)
    return out
