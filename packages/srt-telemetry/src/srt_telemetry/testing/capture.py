"""A dcgm-exporter `/metrics` capture turned into a template for N GPUs (pure).

`build_template(text, gpus=N, hostname=H)` keeps the capture's families, comments and labels in
their order and serves GPUs `0..N-1`: served GPU `k` repeats the lines of captured GPU
`k mod m` (the capture's GPUs sorted by number) with `gpu`, `device` and `UUID` rewritten, so a
capture of 4 GPUs can stand for a node of 8. `UUID`s stay the captured ones for `k < m` unless
`hostname` is given; then every UUID is derived from (hostname, captured UUID, k), so several
replaying exporters of one capture never share a UUID (the finalizer rejects shared UUIDs as
`gpu_uuid_changed`), and the `Hostname` label becomes `hostname`. Lines without a `gpu` label are
served once. Every `DCGM_FI_DEV_POWER_USAGE` value becomes a slot that `render` fills.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from srt_telemetry.errors import ConfigError

__all__ = ["POWER_METRIC", "CaptureError", "DcgmTemplate", "build_template"]

POWER_METRIC = "DCGM_FI_DEV_POWER_USAGE"
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_UUID_NS = uuid.UUID("5b0c8a52-6f43-4a0e-9d0b-2f5d0f3c7a11")  # fixed: same inputs, same UUIDs


class CaptureError(ConfigError):
    """The capture is not a dcgm-exporter body this tool can replay."""


@dataclass(frozen=True, slots=True)
class _Sample:
    name: str
    labels: tuple[tuple[str, str], ...]  # raw (still escaped) label values, in capture order
    value: str
    timestamped: bool = False

    def label(self, key: str) -> str | None:
        return next((v for k, v in self.labels if k == key), None)


@dataclass(frozen=True, slots=True)
class _Line:
    """One output line: text before the value, and either a fixed value or a power slot."""

    head: str
    value: str | None  # None for comments
    power_slot: int | None = None


@dataclass(frozen=True, slots=True)
class DcgmTemplate:
    lines: tuple[_Line, ...]
    uuids: tuple[str, ...]  # served GPU k -> its UUID
    captured_timestamps: bool = False  # the capture's samples carried timestamps

    @property
    def gpus(self) -> int:
        return len(self.uuids)

    def render(self, powers_w: Sequence[float], timestamp_ms: int | None = None) -> bytes:
        """The body with GPU k's power `powers_w[k]` (dcgm-exporter prints 6 decimals) and, when
        `timestamp_ms` is given, that timestamp on every sample."""
        if len(powers_w) != self.gpus:
            raise ValueError(f"{len(powers_w)} power values for {self.gpus} GPUs")
        ts = "" if timestamp_ms is None else f" {timestamp_ms}"
        out: list[str] = []
        for line in self.lines:
            if line.value is None:
                out.append(line.head)
            elif line.power_slot is not None:
                out.append(f"{line.head} {powers_w[line.power_slot]:.6f}{ts}")
            else:
                out.append(f"{line.head} {line.value}{ts}")
        out.append("")
        return "\n".join(out).encode()


def _parse_sample(line: str, lineno: int) -> _Sample:
    b = line.find("{")
    e = line.rfind("}")
    if b >= 0 and e > b:
        name, lab_text, rest = line[:b], line[b + 1 : e], line[e + 1 :]
    else:
        name, _, rest = line.partition(" ")
        lab_text = ""
    fields = rest.split()
    if not name or len(fields) not in (1, 2):
        raise CaptureError(f"capture line {lineno}: not a sample line: {line[:200]!r}")
    return _Sample(name.strip(), tuple(_LABEL.findall(lab_text)), fields[0], len(fields) == 2)


def _uuid_for(captured: str, k: int, hostname: str | None, m: int) -> str:
    if hostname is None and k < m:
        return captured
    seed = f"{hostname or ''}/{captured}/{k}"
    return f"GPU-{uuid.uuid5(_UUID_NS, seed)}"


def _head(s: _Sample, rewrite: dict[str, str]) -> str:
    labels = ",".join(f'{k}="{rewrite.get(k, v)}"' for k, v in s.labels)
    return f"{s.name}{{{labels}}}" if s.labels else s.name


def build_template(
    text: str, *, gpus: int | None = None, hostname: str | None = None
) -> DcgmTemplate:
    """The template of `text` for `gpus` GPUs (default: as many as the capture has)."""
    # families in order: (comment lines, samples)
    families: list[tuple[list[str], list[_Sample]]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not families or families[-1][1]:
                families.append(([], []))
            families[-1][0].append(line)
            continue
        if not families:
            families.append(([], []))
        families[-1][1].append(_parse_sample(line, lineno))
    captured: dict[int, str] = {}
    for _, samples in families:
        for s in samples:
            gpu = s.label("gpu")
            if s.name == POWER_METRIC and gpu is not None and gpu.isdigit():
                captured.setdefault(int(gpu), s.label("UUID") or "")
    if not captured or not all(captured.values()):
        raise CaptureError(
            f"the capture has no {POWER_METRIC} sample with `gpu` and `UUID` labels; pass a "
            "dcgm-exporter /metrics capture (e.g. ../shared/corpus/metrics/dcgm-gb200.txt)"
        )
    if hostname is not None:
        hostname = hostname.replace("\\", "\\\\").replace('"', '\\"')
    order = sorted(captured)
    m = len(order)
    n = m if gpus is None else gpus
    if n < 1:
        raise CaptureError(f"--gpus {n}: serve at least one GPU")
    sources = [order[k % m] for k in range(n)]
    uuids = tuple(_uuid_for(captured[src], k, hostname, m) for k, src in enumerate(sources))
    lines: list[_Line] = []
    for comments, samples in families:
        lines.extend(_Line(c, None) for c in comments)
        by_gpu: dict[int, list[_Sample]] = {}
        for s in samples:
            gpu = s.label("gpu")
            if gpu is None or not gpu.isdigit():
                host = {"Hostname": hostname} if hostname is not None else {}
                lines.append(_Line(_head(s, host), s.value))
            else:
                by_gpu.setdefault(int(gpu), []).append(s)
        for k, src in enumerate(sources):
            rewrite = {"gpu": str(k), "device": f"nvidia{k}", "UUID": uuids[k]}
            if hostname is not None:
                rewrite["Hostname"] = hostname
            for s in by_gpu.get(src, []):
                slot = k if s.name == POWER_METRIC else None
                lines.append(_Line(_head(s, rewrite), s.value, slot))
    stamped = any(s.timestamped for _, samples in families for s in samples)
    return DcgmTemplate(lines=tuple(lines), uuids=uuids, captured_timestamps=stamped)
