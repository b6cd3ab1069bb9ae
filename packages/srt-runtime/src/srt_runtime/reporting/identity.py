"""Identity verification (docs/telemetry-and-bench.md#identity-and-fingerprints): the recipe's
``identity`` block checked against what the run observed (the first worker fingerprint, or this
interpreter).

Rules: ``model.repo`` passes when it equals the observed ``hf_repo`` or ``model_id``, fails when
something else was observed, and is only *declared* when nothing was. ``model.revision`` (7+
characters) passes when the observed commit starts with it and fails when the commit differs or
is unknown. ``container.image`` is always declared (not verifiable at runtime). Each
``frameworks`` entry needs the exact installed version. Verification never fails a job: the
result goes to the banner and the lockfile.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import msgspec

from srt_runtime.reporting.fingerprint import FRAMEWORK_PACKAGES
from srt_schema.recipe import IdentityConfig

__all__ = [
    "Check",
    "ObservedIdentity",
    "Verification",
    "canonical_framework",
    "observed_from_fingerprint",
    "read_framework_versions",
    "render_banner",
    "verify_identity",
]

CheckStatus = Literal["OK", "DECLARED", "FAIL"]
MIN_REVISION = 7
_MARK: dict[CheckStatus, str] = {"OK": "OK", "DECLARED": "--", "FAIL": "!!"}
#: distribution names -> the fingerprint's framework keys
_ALIASES = {re.sub(r"[-_.]+", "-", dist).lower(): key for key, dist in FRAMEWORK_PACKAGES.items()}


class Check(msgspec.Struct, frozen=True, kw_only=True):
    field: str
    status: CheckStatus
    message: str


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """The lockfile's ``verification`` section."""

    result: str
    verified: int
    declared: int
    failed: int
    checks: tuple[Check, ...]


class ObservedIdentity(msgspec.Struct, frozen=True, kw_only=True):
    hf_repo: str | None = None
    hf_revision: str | None = None
    model_id: str | None = None
    #: canonical framework name -> installed version (None: not installed)
    frameworks: dict[str, str | None] = {}


def canonical_framework(name: str) -> str:
    """``ai-dynamo``/``dynamo`` -> ``dynamo``, ``tensorrt-llm``/``tensorrt_llm`` ->
    ``tensorrt_llm``; other names normalised like distribution names."""
    norm = re.sub(r"[-_.]+", "-", name).lower()
    if norm in _ALIASES:
        return _ALIASES[norm]
    return next((key for key in FRAMEWORK_PACKAGES if key.replace("_", "-") == norm), norm)


def observed_from_fingerprint(fingerprint: Mapping[str, Any]) -> ObservedIdentity:
    """What a worker fingerprint says about the model and the frameworks."""
    model = fingerprint.get("model")
    model = model if isinstance(model, Mapping) else {}
    frameworks = fingerprint.get("frameworks")
    frameworks = frameworks if isinstance(frameworks, Mapping) else {}

    def _text(value: object) -> str | None:
        return value if isinstance(value, str) and value else None

    return ObservedIdentity(
        hf_repo=_text(model.get("hf_repo")),
        hf_revision=_text(model.get("hf_revision")),
        model_id=_text(model.get("model_id")),
        frameworks={canonical_framework(k): _text(v) for k, v in frameworks.items()},
    )


def read_framework_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Installed versions in this interpreter (``importlib.metadata``), by canonical name."""
    found: dict[str, str | None] = {}
    for name in names:
        key = canonical_framework(name)
        dist = FRAMEWORK_PACKAGES.get(key, name)
        try:
            found[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[key] = None
    return found


def _model_checks(config: IdentityConfig, seen: ObservedIdentity) -> list[Check]:
    checks = []
    repo = config.model.repo
    if repo:
        observed = [v for v in (seen.hf_repo, seen.model_id) if v]
        if not observed:
            checks.append(
                Check(
                    field="model.repo",
                    status="DECLARED",
                    message=f"{repo} (declared, not verifiable at runtime)",
                )
            )
        elif repo in observed:
            checks.append(Check(field="model.repo", status="OK", message=repo))
        else:
            checks.append(
                Check(
                    field="model.repo",
                    status="FAIL",
                    message=f"declared {repo}, found {observed[0]}",
                )
            )
    revision = config.model.revision
    if revision:
        if len(revision) < MIN_REVISION:
            checks.append(
                Check(
                    field="model.revision",
                    status="DECLARED",
                    message=f"{revision} (shorter than {MIN_REVISION} characters, not verified)",
                )
            )
        elif seen.hf_revision is None:
            checks.append(
                Check(
                    field="model.revision",
                    status="FAIL",
                    message=f"declared {revision}, but the model has no revision metadata",
                )
            )
        elif seen.hf_revision.startswith(revision):
            checks.append(Check(field="model.revision", status="OK", message=seen.hf_revision))
        else:
            checks.append(
                Check(
                    field="model.revision",
                    status="FAIL",
                    message=f"declared {revision}, found {seen.hf_revision}",
                )
            )
    return checks


def verify_identity(config: IdentityConfig | None, seen: ObservedIdentity) -> Verification | None:
    """The checks for everything ``identity`` declares; None when it declares nothing (pure)."""
    if config is None:
        return None
    checks = _model_checks(config, seen)
    if config.container.image:
        checks.append(
            Check(
                field="container.image",
                status="DECLARED",
                message=f"{config.container.image} (declared, not verifiable at runtime)",
            )
        )
    for name, expected in sorted(config.frameworks.items()):
        found = seen.frameworks.get(canonical_framework(name))
        label = f"frameworks.{name}"
        if found is None:
            checks.append(
                Check(field=label, status="FAIL", message=f"declared {expected}, not installed")
            )
        elif found == expected:
            checks.append(Check(field=label, status="OK", message=found))
        else:
            checks.append(
                Check(field=label, status="FAIL", message=f"declared {expected}, found {found}")
            )
    if not checks:
        return None
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("OK", "DECLARED", "FAIL")}
    return Verification(
        result=f"{counts['OK']} verified, {counts['DECLARED']} declared, {counts['FAIL']} FAILED",
        verified=counts["OK"],
        declared=counts["DECLARED"],
        failed=counts["FAIL"],
        checks=tuple(checks),
    )


def render_banner(verification: Verification) -> list[str]:
    """Banner lines: ``OK`` verified, ``--`` declared, ``!!`` failed, then the summary."""
    lines = [f"  {_MARK[c.status]} {c.field}: {c.message}" for c in verification.checks]
    return ["Identity verification:", *lines, f"  {verification.result}"]
