"""Test doubles shipped with the package (like httpx's MockTransport): a tiny model folder, a
fixed-stream OpenAI-compatible server, a static file server, a small Mooncake trace and a mirror
of tiny eval datasets, used by the tests, the capacity benchmark, the corpus-run tier and local
runs."""

from __future__ import annotations

from srt_bench.testing.curve import LatencyCurve
from srt_bench.testing.eval_mirror import write_eval_mirror
from srt_bench.testing.file_server import StaticFileServer
from srt_bench.testing.fixed_server import FixedStreamServer, ServerBehaviour
from srt_bench.testing.hub_server import HubServer
from srt_bench.testing.schedule import TokenSchedule, prompt_key, token_times
from srt_bench.testing.tiny_model import write_tiny_model
from srt_bench.testing.traces import TINY_TRACE_ROWS, write_tiny_trace

__all__ = [
    "TINY_TRACE_ROWS",
    "FixedStreamServer",
    "HubServer",
    "LatencyCurve",
    "ServerBehaviour",
    "StaticFileServer",
    "TokenSchedule",
    "prompt_key",
    "token_times",
    "write_eval_mirror",
    "write_tiny_model",
    "write_tiny_trace",
]
