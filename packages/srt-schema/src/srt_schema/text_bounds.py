"""Bounds on text and lists, declared once (docs/recipes.md#bounded-input).

Every string a recipe or ``srtslurm.yaml`` holds has a length bound, and a field with a format
(a path, an image reference, a short name) has that format; every list has a maximum length.
The structural check (:mod:`srt_schema.structural`) applies them wherever the schema types a
value, and :func:`free_form_issue` where it is free-form (``roles.*.args``, ``environment``).
Slurm time limits are checked by their own parser (:mod:`srt_schema.time_limit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_CONCURRENCY_LEVELS",
    "MAX_ITEMS",
    "MAX_TEXT",
    "TEXT_FORMATS",
    "TextFormat",
    "free_form_issue",
    "list_limit",
    "text_issue",
]

#: Any string: at most this many characters (16 KiB holds any command line a recipe needs).
MAX_TEXT = 16_384
#: Any list: at most this many entries.
MAX_ITEMS = 1_024
#: ``benchmark.concurrencies``: at most this many levels (each one is a benchmark run).
MAX_CONCURRENCY_LEVELS = 256

_CONTROL = "\x00-\x1f\x7f"
#: A path: no control characters, no leading or trailing blank.
_PATH = re.compile(rf"^(?:[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?)?$")
#: An image reference, a ``.sqsh`` path or an alias: one word of printable characters.
_WORD = re.compile(rf"^[^\s{_CONTROL}]*$")
#: A short name (``bf16``, ``gb200``, a partition): letters, digits, ``_ . + -``.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\-]*$")


@dataclass(frozen=True)
class TextFormat:
    max_length: int
    pattern: re.Pattern[str] | None
    #: what is accepted, as the message says it
    describe: str
    #: a URL that must not carry a user name or password, and what to do instead
    no_credentials: str | None = None


_PATH_FORMAT = TextFormat(
    4096, _PATH, "a path of at most 4096 characters, no control characters or edge blanks"
)
_SHORT_NAME = TextFormat(64, _NAME, "a short name of at most 64 letters, digits, _ . + or -")

#: A field whose own rule (``validate/names_rules.py``) bounds it with a more precise message;
#: here it is held only to the loader's bound on one value (YAML_LIMITS["scalar_length"]).
_OWN_RULE = TextFormat(1024 * 1024, None, "a value of at most 1 MiB")

#: (schema definition, key) -> the format of that text field.
TEXT_FORMATS: dict[tuple[str, str], TextFormat] = {
    ("Recipe", "name"): _OWN_RULE,
    ("RecipeBase", "name"): _OWN_RULE,
    ("ModelConfig", "path"): TextFormat(
        4096,
        _PATH,
        "a folder, hf:<org>/<name> or a model_paths alias of at most 4096 characters, no "
        "control characters or edge blanks",
    ),
    ("ModelConfig", "container"): TextFormat(
        1024,
        _WORD,
        "an image reference (registry/name:tag), a .sqsh path or a containers alias of at most "
        "1024 characters, without blanks",
    ),
    ("ModelConfig", "precision"): TextFormat(
        32, _NAME, "a short name such as fp8, bf16 or fp4 (at most 32 letters, digits, _ . + -)"
    ),
    ("ModelConfig", "stage_dir"): _PATH_FORMAT,
    ("ResourceConfig", "gpu_type"): _SHORT_NAME,
    ("SlurmConfig", "account"): _SHORT_NAME,
    ("SlurmConfig", "partition"): _SHORT_NAME,
    ("SlurmConfig", "time_limit"): TextFormat(64, None, "a Slurm time limit"),
    ("$root", "default_gpu_type"): _SHORT_NAME,
    ("$root", "default_account"): _SHORT_NAME,
    ("$root", "default_partition"): _SHORT_NAME,
    ("$root", "default_time_limit"): TextFormat(64, None, "a Slurm time limit"),
}

_IMAGE_FORMAT = TextFormat(
    1024,
    _WORD,
    "an image reference (registry/name:tag), a .sqsh path or a containers alias of at most "
    "1024 characters, without blanks",
)
for _where in (
    ("BenchmarkConfig", "dataset_path"),
    ("BenchmarkConfig", "agentperf_client_dir"),
    ("BenchmarkConfig", "trace_file"),
    ("NsysObservabilityConfig", "nvtx_injection_path"),
    ("OutputConfig", "log_dir"),
    ("ProfilingConfig", "nsys_library_paths"),  # each entry
    ("Recipe", "extra_mount"),  # each entry
    ("RecipeBase", "extra_mount"),
    ("SourceConfig", "path"),
    ("TachometerConfig", "binary_path"),
    ("TraceReplayWorkload", "path"),
    ("VLLMFailoverConfig", "shared_dir"),
    ("CpuPowerConfig", "storage_subdir"),
    ("TachometerConfig", "storage_subdir"),
    ("TelemetryConfig", "storage_subdir"),
):
    TEXT_FORMATS.setdefault(_where, _PATH_FORMAT)
for _where in (
    ("BenchmarkConfig", "container_image"),
    ("FrontendConfig", "nginx_container"),
    ("FrontendConfig", "container_image"),
    ("IdentityContainerConfig", "image"),
    # roles.*.container: its own rule (roles_rules: a blank one is named as such)
    ("ServiceConfig", "container"),
    ("TelemetryExporterConfig", "container_image"),
):
    TEXT_FORMATS.setdefault(_where, _IMAGE_FORMAT)

_STATUS_URL = TextFormat(
    4096,
    _WORD,
    "a URL of at most 4096 characters, without blanks",
    no_credentials=(
        "the status reporter sends no URL credentials (the password would be written with the "
        "URL): remove user:password@ from the URL and give the collector's bearer token in "
        "the environment variable reporting.status.token_env names (SRTCTL_STATUS_TOKEN unless "
        "set), as `srtctl status-server` expects"
    ),
)
TEXT_FORMATS[("ReportingStatusConfig", "endpoint")] = _STATUS_URL
TEXT_FORMATS[("ReportingStatusConfig", "endpoints")] = _STATUS_URL  # each entry

#: ``scheme://user[:password]@`` at the start of a URL.
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://[^/?#@]*@")

#: (schema definition, key) -> the most entries its list may hold (else MAX_ITEMS).
LIST_LIMITS: dict[tuple[str, str], int] = {
    ("BenchmarkConfig", "concurrencies"): MAX_CONCURRENCY_LEVELS,
}


def list_limit(where: tuple[str, str]) -> int:
    return LIST_LIMITS.get(where, MAX_ITEMS)


def text_issue(where: tuple[str, str], value: str) -> str | None:
    """What is wrong with ``value`` in the text field ``where``, or None."""
    fmt = TEXT_FORMATS.get(where)
    limit = fmt.max_length if fmt is not None else MAX_TEXT
    if len(value) > limit:
        wanted = fmt.describe if fmt is not None else f"at most {MAX_TEXT} characters"
        return f"a text of {len(value)} characters is too long; write {wanted}"
    if fmt is not None and fmt.pattern is not None and not fmt.pattern.fullmatch(value):
        return f"{_clip(value)} is not allowed here; write {fmt.describe}"
    if fmt is not None and fmt.no_credentials is not None and _USERINFO.match(value):
        shown = _USERINFO.sub(lambda m: m.group(0).split("://")[0] + "://<credentials>@", value)
        return f"{_clip(shown)} holds credentials; {fmt.no_credentials}"
    return None


def free_form_issue(value: Any) -> tuple[tuple[str | int, ...], str] | None:
    """The first over-long string or list inside a free-form value: (relative path, message)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str) and len(node) > MAX_TEXT:
            return path, f"a text of {len(node)} characters is too long; write at most {MAX_TEXT}"
        if isinstance(node, list | tuple):
            if len(node) > MAX_ITEMS:
                return path, f"a list of {len(node)} entries is too long; write at most {MAX_ITEMS}"
            stack.extend(((*path, i), v) for i, v in enumerate(node))
        elif isinstance(node, dict):
            if len(node) > MAX_ITEMS:
                return path, (
                    f"a mapping of {len(node)} keys is too long; write at most {MAX_ITEMS}"
                )
            for key, item in node.items():
                if isinstance(key, str) and len(key) > MAX_TEXT:
                    return path, f"a key of {len(key)} characters is too long"
                stack.append(((*path, str(key)), item))
    return None


def _clip(value: str) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
