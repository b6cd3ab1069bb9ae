"""Run an evaluator: concurrent chat requests, scoring, `accuracy/<name>_<model>.json`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import msgspec

from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchRequestError
from srt_bench.evals.datasets import Question, read_questions
from srt_bench.evals.scoring import build_prompt, is_correct
from srt_bench.evals.sources import find_or_fetch, plan_lookup
from srt_bench.fetch import record_fetched
from srt_bench.plans import EvalPlan

__all__ = ["build_report", "run_eval", "select_questions"]

Log = Callable[[str], None]


class _Message(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Response(msgspec.Struct):
    choices: list[_Choice]


def select_questions(
    plan: EvalPlan, questions: list[Question]
) -> tuple[list[Question], list[Question]]:
    """(shots, evaluated): gsm8k shots are the first `num_shots` rows; longbenchv2 filters by
    category and context length; then the first `num_examples`."""
    shots = questions[: plan.num_shots] if plan.name == "gsm8k" else []
    pool = questions[len(shots) :]
    if plan.categories:
        wanted = set(plan.categories)
        pool = [q for q in pool if q.category in wanted]
    if plan.max_context_length is not None:
        pool = [q for q in pool if q.context_words <= plan.max_context_length]
    if plan.num_examples is not None:
        pool = pool[: plan.num_examples]
    return shots, pool


def build_report(
    plan: EvalPlan, model: str, questions: list[Question], outcomes: list[list[bool | None]]
) -> dict[str, Any]:
    """Score = correct / attempts; a failed request (None) counts as wrong and is reported."""
    attempts = sum(len(o) for o in outcomes)
    correct = sum(1 for o in outcomes for v in o if v)
    failed = sum(1 for o in outcomes for v in o if v is None)
    by_cat: dict[str, list[int]] = {}
    for q, o in zip(questions, outcomes, strict=True):
        if q.category:
            agg = by_cat.setdefault(q.category, [0, 0])
            agg[0] += sum(1 for v in o if v)
            agg[1] += len(o)
    return {
        "eval": plan.name,
        "model": model,
        "score": correct / attempts if attempts else None,
        "correct": correct,
        "attempts": attempts,
        "failed_requests": failed,
        "num_examples": len(questions),
        "repeat": plan.repeat,
        "num_shots": plan.num_shots,
        "max_tokens": plan.max_tokens,
        "temperature": plan.temperature,
        "per_category": {k: v[0] / v[1] for k, v in sorted(by_cat.items())},
    }


async def _ask_all(
    plan: EvalPlan, config: BenchRunConfig, prompts: list[str]
) -> list[list[str | None]]:
    sem = asyncio.Semaphore(plan.num_threads)
    url = config.endpoint.rstrip("/") + "/v1/chat/completions"

    async def ask(client: httpx.AsyncClient, prompt: str) -> str | None:
        body: dict[str, Any] = {
            "model": config.model_name,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": plan.max_tokens,
            "temperature": plan.temperature,
        }
        if plan.top_p is not None:
            body["top_p"] = plan.top_p
        if plan.top_k is not None:
            body["top_k"] = plan.top_k
        async with sem:
            try:
                resp = await client.post(url, content=msgspec.json.encode(body))
            except httpx.HTTPError:
                return None
        if resp.status_code != 200:
            return None
        try:
            msg = msgspec.json.decode(resp.content, type=_Response).choices[0].message
        except (msgspec.DecodeError, IndexError):
            return None
        return msg.content or ""

    limits = httpx.Limits(max_connections=plan.num_threads)
    async with httpx.AsyncClient(
        limits=limits,
        timeout=httpx.Timeout(config.request_timeout_seconds),
        headers={"content-type": "application/json"},
        trust_env=False,
    ) as client:
        answers = await asyncio.gather(
            *(ask(client, p) for p in prompts for _ in range(plan.repeat))
        )
    return [list(answers[i * plan.repeat : (i + 1) * plan.repeat]) for i in range(len(prompts))]


def run_eval(
    plan: EvalPlan,
    config: BenchRunConfig,
    out_dir: Path,
    *,
    log: Log,
    environ: Mapping[str, str] | None = None,
) -> int:
    lookup = plan_lookup(
        plan.name,
        dataset_path=plan.dataset_file,
        datasets_dir=config.datasets_dir,
        environ=os.environ if environ is None else environ,
    )
    used = find_or_fetch(lookup, log)
    record_fetched(out_dir, (used,))  # its sha256 goes into the lock (lock.datasets)
    dataset = Path(used.path)
    log(f"{plan.name}: questions from {dataset} (sha256 {used.sha256})")
    questions = read_questions(plan.name, dataset)
    shots, selected = select_questions(plan, questions)
    prompts = [build_prompt(plan.name, q, shots) for q in selected]
    log(f"{plan.name}: {len(selected)} questions x {plan.repeat}, {plan.num_threads} concurrent")
    answers = asyncio.run(_ask_all(plan, config, prompts))
    outcomes: list[list[bool | None]] = [
        [None if a is None else is_correct(plan.name, q, a) for a in row]
        for q, row in zip(selected, answers, strict=True)
    ]
    report = build_report(plan, config.model_name, selected, outcomes)
    folder = out_dir / "accuracy"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{plan.name}_{config.model_name.replace('/', '_')}.json"
    path.write_bytes(msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
    log(f"{plan.name}: score {report['score']} ({report['correct']}/{report['attempts']}), {path}")
    if report["failed_requests"] == report["attempts"]:
        raise BenchRequestError(f"{plan.name}: every request to {config.endpoint} failed")
    return 0
