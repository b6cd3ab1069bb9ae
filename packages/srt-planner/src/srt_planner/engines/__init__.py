"""Engine command builders: one registry, dispatched on the engine struct's type."""

from __future__ import annotations

from typing import assert_never

from srt_planner._recipe import Engine
from srt_planner.engines.atom import build_atom
from srt_planner.engines.base import EngineCommand, WorkerProcess, WorkerRequest
from srt_planner.engines.mocker import build_mocker
from srt_planner.engines.sglang import build_sglang
from srt_planner.engines.tilert import build_tilert
from srt_planner.engines.trtllm import build_trtllm
from srt_planner.engines.vllm import build_vllm
from srt_schema.recipe import (
    AtomBackend,
    MockerBackend,
    SGLangBackend,
    TileRTBackend,
    TRTLLMBackend,
    VLLMBackend,
)

__all__ = ["EngineCommand", "WorkerProcess", "WorkerRequest", "build_engine_command"]


def build_engine_command(engine: Engine, request: WorkerRequest) -> EngineCommand:
    match engine:
        case SGLangBackend():
            return build_sglang(engine, request)
        case VLLMBackend():
            return build_vllm(engine, request)
        case TRTLLMBackend():
            return build_trtllm(engine, request)
        case MockerBackend():
            return build_mocker(engine, request)
        case AtomBackend():
            return build_atom(engine, request)
        case TileRTBackend():
            return build_tilert(engine, request)
        case _:
            assert_never(engine)
