"""``srtctl status-server``: a status collector on SQLite, standard library only.

It speaks the protocol the product's own reporters use (docs/telemetry-and-bench.md#status-api and
docs/telemetry-and-bench.md#log-streaming): job records and lifecycle events from
``srt_runtime.reporting.status``, log and capture chunks from ``srt_runtime.reporting.stream``. One
job per module:

- :mod:`~srt_cli.collector.protocol`: the wire format, validated (pure)
- :mod:`~srt_cli.collector.store`: jobs and events in SQLite
- :mod:`~srt_cli.collector.uploads`: uploaded bytes on disk, idempotent by offset
- :mod:`~srt_cli.collector.auth` and :mod:`~srt_cli.collector.cors`: access rules (pure)
- :mod:`~srt_cli.collector.routes`: requests to answers
- :mod:`~srt_cli.collector.server`: the HTTP server
- :mod:`~srt_cli.collector.ui`: the static page at ``/``
"""

from __future__ import annotations

from srt_cli.collector.auth import Tokens
from srt_cli.collector.errors import CollectorConfigError, CollectorError, CollectorStartError
from srt_cli.collector.server import Collector, CollectorSettings, open_collector

__all__ = [
    "Collector",
    "CollectorConfigError",
    "CollectorError",
    "CollectorSettings",
    "CollectorStartError",
    "Tokens",
    "open_collector",
]
