"""Stand-in engines: a recipe's own plan with only the GPU engines replaced
(``srtctl apply --stand-in-engines``; docs/design.md#stand-in-engines).

Everything else the plan holds stays as the recipe makes it: frontends and routers, nginx,
services, the health gate, the benchmark client, telemetry, ports, environment (the GPU indices
included: nothing needs a device) and the served model name. Each engine worker becomes:

- behind the Dynamo frontend: the Dynamo mocker, registered where the engine registers (the
  ``dyn://<namespace>.<component>.generate`` endpoint the engine's Dynamo module uses, prefill
  or backend), with the engine's request plane, event plane, bootstrap port and roles;
- otherwise (a router, or the worker serving the public port itself): ``python -m
  srt_runtime.standin``, an OpenAI-compatible server on the worker's HTTP port that also binds
  the other ports the engine binds;
- a follower rank of a multi-node worker (which serves nothing) or a vLLM shadow engine (a
  standby): a process that waits to be stopped. vLLM data-parallel processes behind Dynamo are
  not followers: each registers (the health gate counts them), so each becomes a mocker. MPI
  endpoints (TRT-LLM) run one process per node instead of one task per GPU.

A mocker worker is already no GPU engine: only its ``--model-path`` moves to the stand-in model.
The stand-in model is a word-level tokenizer folder (:func:`stand_in_model_files`) that the
mocker loads, the stand-ins count tokens in, and the benchmark tokenizes with.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

import msgspec

from srt_planner._recipe import Engine
from srt_planner.context import PlanContext
from srt_planner.engines.base import EngineCommand, WorkerRequest
from srt_planner.engines.vllm import every_process_registers
from srt_planner.errors import PlanningError
from srt_planner.plan import HttpProbe, StandIn
from srt_schema.recipe import MockerBackend
from srt_schema.registry import FRONTENDS
from srt_schema.roles import engine_type

__all__ = [
    "STAND_IN_ENV",
    "STAND_IN_FOLDER",
    "STAND_IN_MODULE",
    "STAND_IN_VOCABULARY",
    "StandIn",
    "check_frontend",
    "stand_in_command",
    "stand_in_model_files",
    "stand_in_readiness",
]

#: The variable that tells the in-allocation runtime to plan with stand-ins (its value: the
#: stand-in model folder); the batch script of a stand-in job exports it.
STAND_IN_ENV = "SRTCTL_STAND_IN_MODEL"
#: The stand-in model's folder under the output base (written by srtctl before the job runs).
STAND_IN_FOLDER = ".stand-in-model"
#: The stand-in server's module (srt-runtime, installed wherever the runtime runs).
STAND_IN_MODULE = "srt_runtime.standin"
#: Words ``w0 .. w<n-1>`` of the stand-in vocabulary.
STAND_IN_VOCABULARY = 2000
_SPECIAL = ("<unk>", "<s>", "</s>")
#: Fast enough that a stand-in is never the bottleneck of a short benchmark.
MOCKER_SPEEDUP = "100.0"
_DEFAULT_NAMESPACE = "dynamo"


def stand_in_model_files() -> dict[str, str]:
    """File name -> content of the stand-in model folder (deterministic): a word-level
    ``tokenizer.json`` (every token one visible word, so a re-tokenized stream counts the same),
    its config with a plain-concatenation chat template, and a tiny ``config.json``."""
    vocab = {token: i for i, token in enumerate(_SPECIAL)}
    vocab.update({f"w{i}": len(_SPECIAL) + i for i in range(STAND_IN_VOCABULARY)})
    added = [
        {
            "id": i,
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, token in enumerate(_SPECIAL)
    ]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": False},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": 32768,
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
    }
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(vocab),
        "max_position_embeddings": 32768,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "bfloat16",
    }

    def dump(value: object) -> str:
        return json.dumps(value, indent=2, sort_keys=True) + "\n"

    return {
        "tokenizer.json": json.dumps(tokenizer, separators=(",", ":")) + "\n",
        "tokenizer_config.json": dump(tokenizer_config),
        "config.json": dump(config),
    }


def check_frontend(ctx: PlanContext, *, has_frontend_process: bool) -> None:
    """Refuse a stand-in plan whose frontend program cannot be installed on a machine without
    GPUs (the frontend is never faked: it runs as itself or not at all)."""
    info = FRONTENDS[ctx.frontend]
    if has_frontend_process and not info.package:
        raise PlanningError(
            f"$.frontend.type: {ctx.frontend} cannot run with stand-in engines: "
            f"{info.not_installable or 'no PyPI distribution provides ' + info.program}; "
            "the stand-in mode runs every frontend as the real program"
        )


def _flag(argv: Sequence[str], name: str) -> str | None:
    """The value of ``--name value`` or ``--name=value`` in ``argv`` (the last one wins)."""
    found: str | None = None
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif word.startswith(name + "="):
            found = word[len(name) + 1 :]
    return found


def _engine_argv(original: EngineCommand) -> tuple[str, ...]:
    """The engine's own argv: a sidecar pair's ``bash -c`` script is searched as words."""
    argv = original.argv
    if len(argv) == 3 and argv[0] == "bash" and argv[1] == "-c":
        try:
            return tuple(shlex.split(argv[2]))
        except ValueError:
            return argv
    return argv


def _dynamo_endpoint(request: WorkerRequest, argv: Sequence[str]) -> str:
    """Where the engine's Dynamo module registers: its ``--endpoint``, else
    ``dyn://<namespace>.<prefill|backend>.generate`` (the default of dynamo.sglang, dynamo.vllm
    and dynamo.trtllm in ai-dynamo 1.6.1)."""
    given = _flag(argv, "--endpoint")
    if given is not None:
        return given
    namespace = _flag(argv, "--namespace") or _DEFAULT_NAMESPACE
    component = "prefill" if request.role.name == "prefill" else "backend"
    return f"dyn://{namespace}.{component}.generate"


def _mocker_engine(kind: str, disaggregated: bool) -> str:
    """The mocker's timing model: the engine's own where the mocker has it, except TRT-LLM
    disaggregated (ai-dynamo 1.6.1's mocker: "mocker handoff does not support TRT-LLM"), which
    simulates with vLLM's; the registration stays the engine's."""
    if kind in ("sglang", "vllm") or (kind == "trtllm" and not disaggregated):
        return kind
    return "vllm"


def _mocker(
    ctx: PlanContext, engine: Engine, request: WorkerRequest, argv: Sequence[str]
) -> list[str]:
    kind = engine_type(engine)
    proc = request.process
    out = [ctx.python, "-m", "dynamo.mocker", "--model-path", _model(ctx)]
    out += ["--model-name", ctx.served_model_name]
    out += ["--endpoint", _dynamo_endpoint(request, argv)]
    out += ["--engine-type", _mocker_engine(kind, request.disaggregated)]
    out += ["--speedup-ratio", MOCKER_SPEEDUP]
    if request.disaggregated:
        out += ["--disaggregation-mode", request.role.name]
    bootstrap = proc.bound_ports.get("bootstrap")  # the leader's: ranks share it
    if bootstrap is not None:
        out += ["--bootstrap-ports", str(bootstrap)]
    plane = _flag(argv, "--request-plane")
    if plane in ("nats", "tcp"):
        out += ["--request-plane", plane]
    return out


def _server(ctx: PlanContext, engine: Engine, request: WorkerRequest) -> list[str]:
    proc = request.process
    ports = proc.bound_ports
    # A worker that serves the public port itself listens there (frontend sglang, vllm,
    # trtllm_serve aggregated); its own HTTP port is then bound as well.
    main = "public" if "public" in ports else "http"
    out = [ctx.python, "-m", STAND_IN_MODULE, "--host", "0.0.0.0"]
    out += ["--port", str(ports[main])]
    out += ["--served-model-name", ctx.served_model_name, "--model-path", _model(ctx)]
    out += ["--engine", engine_type(engine), "--role", request.role.name]
    for name in sorted(ports):
        if name != main:
            out += ["--bind", f"{name}={ports[name]}"]
    return out


def _model(ctx: PlanContext) -> str:
    assert ctx.stand_in is not None
    return ctx.stand_in.model


def stand_in_command(
    engine: Engine, request: WorkerRequest, original: EngineCommand
) -> EngineCommand:
    """The stand-in of one engine process (see the module docstring)."""
    ctx = request.ctx
    if isinstance(engine, MockerBackend):
        argv = list(original.argv)
        at = argv.index("--model-path") + 1
        argv[at] = _model(ctx)
        return msgspec.structs.replace(original, argv=tuple(argv))
    proc = request.process
    # vLLM data-parallel ranks behind Dynamo register each process (they serve, not follow).
    serving_rank = ctx.dynamo_workers and every_process_registers(
        engine, dict(request.role.config.args), len(proc.gpus)
    )
    if (not proc.is_leader and not serving_rank) or proc.engine > 0:
        # A follower rank serves nothing, and a vLLM shadow engine is a standby: each lives as
        # long as its step.
        return msgspec.structs.replace(original, argv=("sleep", "infinity"))
    words = _engine_argv(original)
    if ctx.dynamo_workers:
        argv = _mocker(ctx, engine, request, words)
    elif "http" in request.process.ports:
        argv = _server(ctx, engine, request)
    else:
        raise PlanningError(
            f"$.roles.{request.role.name}: a {engine_type(engine)} worker with no HTTP "
            "port and no Dynamo frontend has no stand-in (nothing would reach it)"
        )
    # The engine's env, files and GPU mask stay: the plan is the recipe's, the programs differ.
    return msgspec.structs.replace(original, argv=tuple(argv), fatal_log_patterns=())


def stand_in_readiness(ctx: PlanContext, node: str, argv: Sequence[str]) -> HttpProbe | None:
    """A stand-in server is ready when its ``/health`` answers (a fraction of a second): the
    routers start after it, as they would after a real engine finished loading. Other stand-ins
    (mockers, waiting followers) have no probe."""
    if tuple(argv[1:3]) != ("-m", STAND_IN_MODULE):
        return None
    port = _flag(argv, "--port")
    assert port is not None
    health = ctx.recipe.health_check
    return HttpProbe(
        host=ctx.address(node),
        port=int(port),
        path="/health",
        timeout_seconds=float(health.max_attempts * health.interval_seconds),
        interval_seconds=0.2,
    )
