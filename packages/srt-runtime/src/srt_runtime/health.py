"""The health gate: is the deployment ready to serve the benchmark?

``HealthGate.url`` is the endpoint the planner chose for the family (``http://node:8000/health``):

- ``dynamo``: ``GET url`` (``/health``); count ``instances[]`` whose ``endpoint`` is ``generate``
  by ``component`` (``prefill`` -> prefill; ``decode``/``tensorrt_llm``/``backend`` -> decode).
- ``router``: ``GET url`` (``/workers``); ``stats.prefill_count`` and ``stats.decode_count +
  stats.regular_count``.
- ``direct``: ``GET url`` (``/health``) answers 200, then ``GET /v1/models`` on the same server
  lists the plan's served model name (``HealthGate.model``; any model when it is empty). The
  ``dynamo`` family checks the same list once its worker counts are met.
- ``trtllm_serve``: ``GET url`` answers 200.
- ``none``: no gate.

Polling starts at 0.25 s and doubles up to ``interval_seconds``; the deadline is
``max_attempts x interval_seconds``. The parsers are pure. When the gate passes, its facts go to
``logs/health_gate.json`` (``srt_schema.validity.HealthGateRecord``: planned and seen worker
counts, the time) for ``srt-bench validity``.
"""

from __future__ import annotations

from typing import NamedTuple, assert_never

import httpx
import msgspec

from srt_planner.plan import HealthGate
from srt_runtime.errors import HealthGateError
from srt_runtime.files import write_atomic
from srt_runtime.status import EVENTS_FILE
from srt_runtime.supervisor import Supervisor
from srt_schema.validity import HEALTH_GATE_FILE, HealthGateRecord

__all__ = [
    "Counts",
    "check_health",
    "listed_models",
    "parse_dynamo_health",
    "parse_router_workers",
    "wait_healthy",
]

_FIRST_DELAY = 0.25
_REQUEST_TIMEOUT = 2.0
_PROGRESS_EVERY = 60.0


class Counts(NamedTuple):
    prefill: int
    decode: int


def parse_dynamo_health(body: object) -> Counts | None:
    """Worker counts from a Dynamo frontend's ``/health`` body (None: no ``instances``)."""
    if not isinstance(body, dict) or not isinstance(body.get("instances"), list):
        return None
    prefill = decode = 0
    for inst in body["instances"]:
        if not isinstance(inst, dict) or inst.get("endpoint") != "generate":
            continue
        component = inst.get("component")
        if component == "prefill":
            prefill += 1
        elif component in ("decode", "tensorrt_llm", "backend"):
            decode += 1
    return Counts(prefill, decode)


def parse_router_workers(body: object) -> Counts | None:
    """Worker counts from a router's ``/workers`` body (None: no ``stats``)."""
    if not isinstance(body, dict) or not isinstance(body.get("stats"), dict):
        return None
    stats = body["stats"]

    def _int(key: str) -> int:
        value = stats.get(key, 0)
        return value if isinstance(value, int) else 0

    return Counts(_int("prefill_count"), _int("decode_count") + _int("regular_count"))


def _get_json(client: httpx.Client, url: str) -> tuple[int, object]:
    response = client.get(url, timeout=_REQUEST_TIMEOUT)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


def listed_models(body: object) -> list[str] | None:
    """The model ids of a ``/v1/models`` body (None: not an OpenAI model list)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def _models_listed(client: httpx.Client, url: str, model: str) -> tuple[bool, str]:
    models = str(httpx.URL(url).copy_with(path="/v1/models", query=None))
    status, body = _get_json(client, models)
    ids = listed_models(body) if status == 200 else None
    if not ids:
        return False, f"{models} answered {status} with no model"
    if model and model not in ids:
        # Requests for the served name would get 404 "Model not found".
        return False, f"{models} lists {ids!r}, not the served name {model!r}"
    return True, f"{models} lists {ids!r}"


def check_health(gate: HealthGate, client: httpx.Client) -> tuple[bool, str]:
    """One attempt: (ready, what we saw)."""
    ready, seen, _ = _check(gate, client)
    return ready, seen


def _check(gate: HealthGate, client: httpx.Client) -> tuple[bool, str, Counts | None]:
    """One attempt: (ready, what we saw, the worker counts when the family reports them)."""
    url = gate.url
    want = f"waiting for {gate.expected_prefill} prefills and {gate.expected_decode} decodes"
    try:
        match gate.family:
            case "dynamo" | "router":
                status, body = _get_json(client, url)
                parse = parse_dynamo_health if gate.family == "dynamo" else parse_router_workers
                counts = parse(body) if status == 200 else None
                if counts is None:
                    return False, f"{url} answered {status} without worker counts", None
                ready = (
                    counts.prefill >= gate.expected_prefill
                    and counts.decode >= gate.expected_decode
                )
                seen = f"Have {counts.prefill} prefills and {counts.decode} decodes."
                if ready and gate.family == "dynamo":
                    # Workers register before the frontend has loaded their model card: until
                    # /v1/models lists a model, a request for it gets 404 "Model not found".
                    return (*_models_listed(client, url, gate.model), counts)
                return ready, f"Model is not ready, {want}. {seen}", counts
            case "direct":
                status, _ = _get_json(client, url)
                if status != 200:
                    return False, f"{url} answered {status}", None
                return (*_models_listed(client, url, gate.model), None)
            case "trtllm_serve":
                status = client.get(url, timeout=_REQUEST_TIMEOUT).status_code
                return status == 200, f"{url} answered {status}", None
            case "none":
                return True, "no health gate", None
            case _:
                assert_never(gate.family)
    except httpx.HTTPError as exc:
        return False, f"{url} not reachable ({type(exc).__name__})", None


def _write_record(sup: Supervisor, gate: HealthGate, counts: Counts | None, seconds: float) -> None:
    """``logs/health_gate.json`` for ``srt-bench validity`` (a failure to write only warns)."""
    events = sup.events.job_dir / EVENTS_FILE if sup.events is not None else None
    record = HealthGateRecord(
        family=gate.family,
        url=gate.url,
        expected_prefill=gate.expected_prefill,
        expected_decode=gate.expected_decode,
        seen_prefill=counts.prefill if counts is not None else None,
        seen_decode=counts.decode if counts is not None else None,
        passed_unix=round(sup.clock.wall(), 3),
        seconds=round(seconds, 3),
        events_file=str(events) if events is not None else None,
    )
    try:
        write_atomic(
            sup.log_dir / HEALTH_GATE_FILE, msgspec.json.format(msgspec.json.encode(record)) + b"\n"
        )
    except OSError as exc:
        sup.log.warning("%s not written: %s", HEALTH_GATE_FILE, exc)


def wait_healthy(sup: Supervisor, gate: HealthGate) -> float:
    """Poll until ready; return the seconds it took. Raises HealthGateError at the deadline."""
    if gate.family == "none":
        return 0.0
    start = sup.clock.monotonic()
    deadline = start + gate.max_attempts * gate.interval_seconds
    delay = _FIRST_DELAY
    last_progress = start
    with httpx.Client() as client:
        while True:
            ready, seen, counts = _check(gate, client)
            now = sup.clock.monotonic()
            if ready:
                sup.log.info("Deployment healthy after %.2f s (%s)", now - start, gate.url)
                _write_record(sup, gate, counts, now - start)
                if sup.events is not None:
                    sup.events.health(gate.url, now - start)
                return now - start
            if now >= deadline:
                raise HealthGateError(
                    f"Server did not become healthy: {gate.family} gate at {gate.url} not ready "
                    f"after {gate.max_attempts * gate.interval_seconds:g} s "
                    f"({gate.max_attempts} x {gate.interval_seconds:g} s); last: {seen}"
                )
            if now - last_progress >= _PROGRESS_EVERY:
                sup.log.info("%s", seen)
                last_progress = now
            sup.sleep(min(delay, max(0.0, deadline - now)))
            delay = min(delay * 2, gate.interval_seconds)
