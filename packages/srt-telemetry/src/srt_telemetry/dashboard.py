"""The per-run dashboard (`srt-telemetry dashboard RUN_DIR`): one self-contained HTML file.
(A little over 400 lines: the page's assembly and its inputs stay together; its parts live in
`dashboard_*.py`.)

Inputs, all optional and relative to RUN_DIR (see `DashboardConfig`): `benchmark-rollup.json`
(decoded by `rollup_view.RollupView`: `runs[]` with `concurrency`, `throughput_toks`, `ttft_*`,
`itl_*`, ...), `<power_dir>/{manifest.json,samples.csv,windows/*.json,energy.json}`,
`<cpu_power_dir>/samples.csv` (CPU leg A) and `<power_dir>/cpu/samples.csv` (CPU leg B).
Output: inline SVG and CSS only, no scripts, no network; the same inputs give byte-identical
output. A missing input leaves its section with a "no data" note; a
malformed one raises `DashboardError` naming the file.

Energy per concurrency comes from the rollup's `energy` (srt-bench energy: GPU J, W, J/output
and J/total token, CPU J) when any run carries one, else from `<power_dir>/energy.json` (no
J/total token there). The power part (per-GPU charts, the verdict) is dashboard_power.py;
the job's title, recipe line and diagnosis, the per-request latency part (result files) and the
engine metrics (Tachometer's Parquet) are dashboard_page.py and the modules it names.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from srt_telemetry.config import DashboardConfig
from srt_telemetry.dashboard_page import (
    PAGE_CSS,
    Extras,
    engine_html,
    grid,
    header_html,
    latency_html,
    read_extras,
)
from srt_telemetry.dashboard_power import (
    Points,
    Window,
    gpu_power_charts,
    power_chart,
    read_gpu_samples,
    verdict_html,
)
from srt_telemetry.dashboard_run import run_title
from srt_telemetry.dashboard_validity import invalid_reason, validity_cell, validity_line
from srt_telemetry.errors import DashboardError
from srt_telemetry.power_windows import decode_window
from srt_telemetry.rollup_view import (
    PowerSummaryView,
    ProfilesView,
    RollupRunView,
    RunEnergyView,
    ValidityView,
    decode_rollup_view,
)
from srt_telemetry.svg import TARGET_CSS, Series, bar_chart, line_chart
from srt_telemetry.targets import TargetView

__all__ = [
    "DashboardData",
    "EnergyRow",
    "read_dashboard_data",
    "render_dashboard",
    "write_dashboard",
]


@dataclass(frozen=True)
class EnergyRow:
    """One concurrency's energy, whichever file it came from (None = not known)."""

    gpu_joules: float | None = None
    gpu_avg_w: float | None = None
    j_per_output_token: float | None = None
    j_per_total_token: float | None = None
    cpu_joules: float | None = None
    valid: bool | None = None


@dataclass
class DashboardData:
    title: str
    runs: tuple[RollupRunView, ...] = ()
    rollup_type: str = ""
    gpu_series: dict[str, Points] = field(default_factory=dict)  # node sums
    gpu_device_series: dict[str, dict[int, Points]] = field(default_factory=dict)
    cpu_series: dict[str, Points] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    energy: dict[int, EnergyRow] = field(default_factory=dict)
    energy_source: str = ""
    power_manifest: dict[str, Any] | None = None
    rollup_power: PowerSummaryView | None = None
    rollup_energy: dict[int, RunEnergyView] = field(default_factory=dict)
    rollup_profiles: ProfilesView | None = None
    validity: ValidityView | None = None
    window_validity: dict[int, ValidityView] = field(default_factory=dict)
    #: the latency targets the run declared (a capacity search's; targets.py)
    targets: tuple[TargetView, ...] = ()
    notes: list[str] = field(default_factory=list)
    #: the job, its outcome, the per-request results and the engine metrics (dashboard_page.py)
    extras: Extras = field(default_factory=Extras)


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DashboardError(f"{path}: cannot read JSON: {exc}; fix or remove the file") from exc


def read_dashboard_data(run_dir: Path, config: DashboardConfig) -> DashboardData:
    if not run_dir.is_dir():
        raise DashboardError(f"{run_dir}: not a directory; pass the run's log directory")
    extras = read_extras(run_dir)
    title = config.title or run_title(extras.info, f"srt run {run_dir.name}")
    data = DashboardData(title=title, extras=extras)
    rollup = run_dir / config.rollup
    if rollup.exists():
        try:
            raw = rollup.read_bytes()
        except OSError as exc:
            raise DashboardError(f"{rollup}: cannot read: {exc}; fix or remove the file") from exc
        view = decode_rollup_view(raw, source=str(rollup))
        data.rollup_type = view.benchmark_type
        data.runs = view.runs
        data.rollup_power = view.power
        data.rollup_energy = view.energy
        data.rollup_profiles = view.profiles
        data.validity, data.window_validity = view.validity, view.window_validity
        data.targets = view.targets
    else:
        data.notes.append(f"no {config.rollup}: benchmark sections are empty")
    pdir = run_dir / config.power_dir
    if (pdir / "manifest.json").exists():
        m = _load_json(pdir / "manifest.json")
        data.power_manifest = m if isinstance(m, dict) else None
    if (pdir / "samples.csv").exists():
        gpu = read_gpu_samples(pdir / "samples.csv")
        if gpu.reasons:
            data.notes.append(f"{pdir / 'samples.csv'}: {', '.join(gpu.reasons)}")
        data.gpu_series = gpu.node_sums
        data.gpu_device_series = gpu.per_gpu
    wdir = pdir / "windows"
    if wdir.is_dir():
        for p in sorted(wdir.glob("*.json")):
            w = decode_window(_load_json(p))
            if w is not None and w.end is not None:
                data.windows.append((w.start, w.end, f"c={w.concurrency}"))
    if data.rollup_energy:
        data.energy_source = f"{config.rollup} (energy)"
        data.energy = {
            c: EnergyRow(
                gpu_joules=e.gpu_energy_joules,
                gpu_avg_w=e.gpu_avg_power_w,
                j_per_output_token=e.joules_per_output_token,
                j_per_total_token=e.joules_per_total_token,
                cpu_joules=e.cpu_energy_joules,
                valid=e.power_coverage_valid,
            )
            for c, e in data.rollup_energy.items()
        }
    elif (pdir / "energy.json").exists():
        data.energy_source = f"{config.power_dir}/energy.json"
        data.energy = _energy_json(_load_json(pdir / "energy.json"), data.power_manifest)
    for cpu_csv, suffix in (
        (run_dir / config.cpu_power_dir / "samples.csv", ""),
        (pdir / "cpu" / "samples.csv", " (exporter)"),
    ):
        if cpu_csv.exists():
            for host, pts in _read_cpu_totals(cpu_csv).items():
                data.cpu_series[host + suffix] = pts
    return data


def _float(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def _energy_json(doc: Any, manifest: dict[str, Any] | None) -> dict[int, EnergyRow]:
    """`energy.json` windows by concurrency; validity from the manifest's window validations."""
    valid: dict[int, bool] = {}
    for v in (manifest or {}).get("window_validations") or []:
        if isinstance(v, dict) and isinstance(v.get("concurrency"), int):
            valid[v["concurrency"]] = v.get("power_coverage_valid") is True
    out: dict[int, EnergyRow] = {}
    for w in doc.get("windows", []) if isinstance(doc, dict) else []:
        if isinstance(w, dict) and isinstance(c := w.get("concurrency"), int):
            out[c] = EnergyRow(
                gpu_joules=_float(w.get("energy_joules")),
                gpu_avg_w=_float(w.get("avg_power_w")),
                j_per_output_token=_float(w.get("joules_per_output_token")),
                valid=valid.get(c),
            )
    return dict(sorted(out.items()))


def _read_cpu_totals(path: Path) -> dict[str, list[tuple[float, float]]]:
    """Node totals over time from a CPU power CSV (leg A v4 or leg B v1: both have
    `timestamp_unix`, `hostname`, `total_power_w`; the total repeats on every row of a sample)."""
    series: dict[str, list[tuple[float, float]]] = {}
    seen: set[tuple[str, str]] = set()
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            key = (row.get("hostname", ""), row.get("timestamp_unix", ""))
            total = row.get("total_power_w", "")
            if key in seen or not total:
                continue
            seen.add(key)
            try:
                point = (float(key[1]), float(total))
            except ValueError as exc:
                raise DashboardError(f"{path}: bad number in row {row}") from exc
            series.setdefault(key[0], []).append(point)
    return {host: sorted(pts) for host, pts in sorted(series.items())}


def _num(v: Any, digits: int = 1) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return "–"
    return f"{v:,.{digits}f}"


def _t0(data: DashboardData) -> float:
    times = [p[0] for s in (*data.gpu_series.values(), *data.cpu_series.values()) for p in s]
    times += [w[0] for w in data.windows]
    return min(times) if times else 0.0


def power_asked(data: DashboardData) -> bool:
    """Whether the run captured (or tried to capture) power: a power manifest, the rollup's
    `power` (written by `srt-bench energy`, which runs only with power telemetry), samples or
    energy. Without any, the page has no power section, columns or warning."""
    return bool(
        data.power_manifest is not None
        or data.rollup_power is not None
        or data.rollup_energy
        or data.energy
        or data.gpu_series
        or data.cpu_series
    )


def _valid(v: bool | None) -> str:
    return "–" if v is None else "valid" if v else "not valid"


def render_dashboard(data: DashboardData) -> str:
    """The whole HTML page (pure)."""
    runs = data.runs
    cats = [str(r.concurrency) for r in runs]
    tput = Series(
        "output tok/s",
        [float(r.e2el_mean_ms or math.nan) for r in runs],
        [float(r.throughput_toks or math.nan) for r in runs],
        labels=[f"c={c}" for c in cats],
    )
    why = [invalid_reason(data.window_validity.get(r.concurrency or 0)) for r in runs]
    kept = [
        i for i, (x, y) in enumerate(zip(tput.xs, tput.ys, strict=True))
        if math.isfinite(x) and math.isfinite(y)
    ]  # fmt: skip
    tput_ok = Series(
        tput.name,
        [tput.xs[i] for i in kept],
        [tput.ys[i] for i in kept],
        labels=[tput.labels[i] for i in kept],
        invalid=[why[i] for i in kept],  # an invalid window: hollow, labelled with its reason
    )
    t0 = _t0(data)
    concurrencies = sorted(data.energy)
    throughput = line_chart(
        "Throughput vs latency (one point per concurrency)",
        [tput_ok],
        x_label="mean end-to-end latency (ms)",
        y_label="output tokens/s",
        markers=True,
        empty="no benchmark runs",
    )
    # the rollup's mean/p99 bars, when there are no result files for the p50/p90/p99 ones
    rollup_bars = [
        bar_chart(
            "TTFT (ms)",
            cats,
            [
                ("mean", [r.ttft_mean_ms for r in runs]),
                ("p99", [r.ttft_p99_ms for r in runs]),
            ],
            x_label="concurrency",
            y_label="ms",
            empty="no benchmark runs",
        ),
        bar_chart(
            "ITL (ms)",
            cats,
            [
                ("mean", [r.itl_mean_ms for r in runs]),
                ("p99", [r.itl_p99_ms for r in runs]),
            ],
            x_label="concurrency",
            y_label="ms",
            empty="no benchmark runs",
        ),
    ]
    charts = [
        power_chart(
            "GPU power per node (sum of GPUs)",
            data.gpu_series,
            data.windows,
            t0,
            "no GPU power samples",
        ),
        *gpu_power_charts(data.gpu_device_series, data.windows, t0),
        power_chart(
            "CPU power per node", data.cpu_series, data.windows, t0, "no CPU power samples"
        ),
        bar_chart(
            "GPU energy per token (J/token)"
            + (f", from {data.energy_source}" if data.energy_source else ""),
            [str(c) for c in concurrencies],
            [
                ("J/output token", [data.energy[c].j_per_output_token for c in concurrencies]),
                ("J/total token", [data.energy[c].j_per_total_token for c in concurrencies]),
            ],
            x_label="concurrency",
            y_label="J/token",
            empty="no energy per window (rollup energy or power/energy.json)",
        ),
    ]
    asked = power_asked(data)
    head = (
        "<tr><th>concurrency</th><th>output tok/s</th><th>req/s</th><th>TTFT mean</th>"
        "<th>TTFT p99</th><th>ITL mean</th><th>ITL p99</th><th>E2EL mean</th>"
        + (
            "<th>GPU energy (J)</th><th>avg GPU W</th><th>J/output token</th>"
            "<th>J/total token</th><th>CPU energy (J)</th><th>window power</th>"
            if asked
            else ""
        )
        + "<th>verdict</th></tr>"
    )
    body = ""
    for r in runs:
        e = (
            data.energy.get(r.concurrency, EnergyRow())
            if r.concurrency is not None
            else EnergyRow()
        )
        body += (
            f"<tr><td>{escape(str(r.concurrency))}</td>"
            f"<td>{_num(r.throughput_toks)}</td>"
            f"<td>{_num(r.request_throughput, 3)}</td>"
            f"<td>{_num(r.ttft_mean_ms)}</td><td>{_num(r.ttft_p99_ms)}</td>"
            f"<td>{_num(r.itl_mean_ms, 2)}</td><td>{_num(r.itl_p99_ms, 2)}</td>"
            f"<td>{_num(r.e2el_mean_ms)}</td>"
            + (
                f"<td>{_num(e.gpu_joules)}</td><td>{_num(e.gpu_avg_w)}</td>"
                f"<td>{_num(e.j_per_output_token, 4)}</td>"
                f"<td>{_num(e.j_per_total_token, 4)}</td>"
                f"<td>{_num(e.cpu_joules)}</td><td>{_valid(e.valid)}</td>"
                if asked
                else ""
            )
            + validity_cell(data.window_validity.get(r.concurrency or 0))
            + "</tr>"
        )
    notes = "".join(f"<li>{escape(n)}</li>" for n in [*data.notes, *data.extras.notes])
    power_verdict = verdict_html(data.power_manifest, data.rollup_power, data.rollup_energy)
    bench_charts = [throughput] + ([] if data.extras.phases else rollup_bars)
    source = f"<p>energy from {escape(data.energy_source)}</p>" if data.energy_source else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(data.title)}</title><style>{_CSS}{PAGE_CSS}{TARGET_CSS}</style></head><body>"
        f"<h1>{escape(data.title)}</h1>{header_html(data.extras)}"
        f"{validity_line(data.validity)}"
        + (power_verdict if asked else "")
        + f"<p>benchmark: {escape(data.rollup_type or 'unknown')}, "
        f"{len(runs)} concurrency level(s)</p>"
        f'<h2>Summary</h2><div class="tw"><table>{head}{body}</table></div>{source}'
        + latency_html(data.extras, bench_charts, data.targets)
        + engine_html(data.extras)
        + ('<h2 id="power">Power</h2>' + grid(charts) if asked else "")
        + _profiles_html(data.rollup_profiles)
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + "</body></html>\n"
    )


def _profiles_html(profiles: ProfilesView | None) -> str:
    """The profiles the job wrote (links, relative to the run folder) and the missing ones."""
    if profiles is None:
        return ""
    rows = "".join(
        f"<tr><td>{escape(f.phase)}</td>"
        f'<td style="text-align:left"><a href="{escape(f.path)}">{escape(f.path)}</a></td>'
        f"<td>{f.bytes}</td></tr>"
        for f in profiles.files
    )
    table = (
        f"<table><tr><th>phase</th><th>file</th><th>bytes</th></tr>{rows}</table>"
        if rows
        else "<p>no profile files</p>"
    )
    missing = "".join(f'<li class="warn">{escape(m)}</li>' for m in profiles.missing)
    return f'<h2 id="profiles">Profiles</h2>{table}' + (
        f'<p class="warn">missing:</p><ul>{missing}</ul>' if missing else ""
    )


_CSS = (
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    ".c{margin:12px 0}.t{font:bold 13px sans-serif}.l{font:12px sans-serif;fill:#444}"
    ".k{font:10px sans-serif;fill:#555}.g{stroke:#eee}.ax{fill:none;stroke:#999}"
    "text.bad{fill:#b71c1c}"
    ".band{fill:#ffd54f;opacity:.25}.bl{font:9px sans-serif;fill:#8a6d00}"
    ".ok{color:#1b5e20}.warn{color:#b71c1c}.verdict{border:1px solid;padding:4px 12px}"
    "code{font-size:12px;color:#555}"
)


def write_dashboard(run_dir: Path, config: DashboardConfig) -> Path:
    """Read the run's artifacts and write the HTML file (atomically). Returns its path."""
    out = run_dir / config.output
    html = render_dashboard(read_dashboard_data(run_dir, config))
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(html)
    tmp.replace(out)
    return out
