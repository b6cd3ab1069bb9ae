"""Test doubles shipped with the package (like httpx's MockTransport): a tiny model folder and a
fixed-stream OpenAI-compatible server, used by the tests, the capacity benchmark and local runs."""

from __future__ import annotations

from srt_bench.testing.curve import LatencyCurve
from srt_bench.testing.fixed_server import FixedStreamServer, ServerBehaviour
from srt_bench.testing.hub_server import HubServer
from srt_bench.testing.schedule import TokenSchedule, prompt_key, token_times
from srt_bench.testing.tiny_model import write_tiny_model

__all__ = [
    "FixedStreamServer",
    "HubServer",
    "LatencyCurve",
    "ServerBehaviour",
    "TokenSchedule",
    "prompt_key",
    "token_times",
    "write_tiny_model",
]
