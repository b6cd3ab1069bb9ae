"""The stand-in's command line, parsed once into a frozen ``StandinConfig``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

import msgspec

__all__ = ["Engine", "Role", "StandinConfig", "parse_args"]

Engine = Literal["sglang", "vllm", "trtllm", "atom", "tilert"]
Role = Literal["agg", "prefill", "decode"]


class StandinConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    host: str = "0.0.0.0"
    port: int
    served_model_name: str
    #: What ``/get_server_info`` and ``/get_model_info`` report as the model and tokenizer
    #: path (routers load the tokenizer from it); the served name when not given.
    model_path: str | None = None
    engine: Engine
    role: Role = "agg"
    #: Extra ports the real engine binds (bootstrap, nixl side channel, ...), by name.
    binds: tuple[tuple[str, int], ...] = ()
    ttft_ms: float = 0.0
    itl_ms: float = 0.0
    max_tokens_default: int = 16
    log_requests: Path | None = None


def _bind(text: str) -> tuple[str, int]:
    name, sep, port = text.partition("=")
    if not sep or not name or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"--bind {text!r}: expected NAME=PORT (PORT 1-65535)")
    return name, int(port)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m srt_runtime.standin",
        description="An OpenAI-compatible stand-in for one GPU engine worker (no GPU, no model).",
    )
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, required=True, help="the engine's HTTP port")
    parser.add_argument("--served-model-name", required=True)
    parser.add_argument(
        "--model-path",
        help="the model folder to report (sglang-router and smg load its tokenizer); "
        "default: the served name",
    )
    parser.add_argument("--engine", choices=get_args(Engine), required=True)
    parser.add_argument("--role", choices=get_args(Role), default="agg")
    parser.add_argument(
        "--bind",
        type=_bind,
        action="append",
        default=[],
        metavar="NAME=PORT",
        help="another port the real engine listens on (accepts and closes connections)",
    )
    parser.add_argument("--ttft-ms", type=_non_negative, default=0.0)
    parser.add_argument("--itl-ms", type=_non_negative, default=0.0)
    parser.add_argument("--max-tokens-default", type=int, default=16)
    parser.add_argument("--log-requests", type=Path, help="append one JSON line per request")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> StandinConfig:
    """The config of ``argv`` (argparse exits 2 with a message on a bad one)."""
    parser = _parser()
    ns = parser.parse_args(argv)
    if ns.max_tokens_default < 0:
        parser.error(f"--max-tokens-default {ns.max_tokens_default}: must be >= 0")
    if not 0 <= ns.port < 65536:
        parser.error(f"--port {ns.port}: must be 0-65535")
    return StandinConfig(
        host=ns.host,
        port=ns.port,
        served_model_name=ns.served_model_name,
        model_path=ns.model_path,
        engine=ns.engine,
        role=ns.role,
        binds=tuple(ns.bind),
        ttft_ms=ns.ttft_ms,
        itl_ms=ns.itl_ms,
        max_tokens_default=ns.max_tokens_default,
        log_requests=ns.log_requests,
    )
