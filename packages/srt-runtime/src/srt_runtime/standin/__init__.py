"""A stand-in for one GPU engine worker: ``python -m srt_runtime.standin``.

``srtctl apply --local --stand-in-engines`` runs a recipe's real plan on one machine with each
engine worker that sits behind a router (sglang-router, smg, vllm-router) or serves the public
port itself replaced by this program: an OpenAI-compatible server (stdlib asyncio, raw
HTTP/1.1) that answers what routers and clients ask an engine for (health, model and server
info, Prometheus metrics in the engine's naming, completions, chat, SGLang ``/generate``, the
PD handshakes) and generates exactly the tokens asked for, words of the stand-in vocabulary,
fast enough never to be the bottleneck. Modules: ``config`` (the command line), ``httpio``
(HTTP/1.1), ``parse`` (request bodies), ``responses`` (answer bodies), ``info`` (what an engine
says about itself), ``metrics`` (live counts), ``reqlog`` (``--log-requests``), ``app``
(routes), ``server`` (listeners and signals).
"""

from __future__ import annotations

from srt_runtime.standin.config import StandinConfig, parse_args
from srt_runtime.standin.server import ListenError, serve

__all__ = ["ListenError", "StandinConfig", "main", "parse_args", "serve"]


def main(argv: list[str] | None = None) -> int:
    """Run until SIGTERM or SIGINT; 0 then, 1 when a port cannot be listened on."""
    import asyncio
    import sys

    config = parse_args(argv)
    try:
        asyncio.run(serve(config))
    except ListenError as exc:
        print(f"stand-in: {exc.strerror}", file=sys.stderr)
        return 1
    return 0
