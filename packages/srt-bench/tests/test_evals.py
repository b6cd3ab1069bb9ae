from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.chat_server import chat_server

from srt_bench.config import decode_run_config
from srt_bench.errors import BenchDatasetError, BenchRequestError
from srt_bench.evals.datasets import read_questions
from srt_bench.evals.scoring import extract_answer
from srt_bench.execute import run_plan
from srt_bench.runners import BuildContext, build_plan

DATA = Path(__file__).resolve().parent / "data"


def _run(kind: str, url: str, out: Path, **bench: Any) -> dict[str, Any]:
    config = decode_run_config(
        msgspec.json.encode(
            {
                "benchmark": {"type": kind, **bench},
                "endpoint": url,
                "model_name": "m",
                "total_gpus": 1,
                "datasets_dir": str(DATA),
            }
        )
    )
    plan = build_plan(config, BuildContext(out_dir=out))
    assert run_plan(plan, config, out, log=lambda _l: None, stop=threading.Event()) == 0
    return json.loads((out / "accuracy" / f"{kind}_m.json").read_text())


@pytest.mark.parametrize(
    ("name", "text", "want"),
    [
        ("gsm8k", "40 + 2 = 42 apples.\n#### 42", "42"),
        ("gsm8k", "The answer is 1,000 minus 1 which is 999.", "999"),
        ("gsm8k", "no number here", None),
        ("mmlu", "Reasoning...\nAnswer: B", "B"),
        ("mmlu", "the answer is (c)", "C"),
        ("gpqa", "Thinking\nD", "D"),
        ("longbenchv2", "I cannot tell", None),
    ],
)
def test_answer_extraction(name: Any, text: str, want: str | None) -> None:
    assert extract_answer(name, text) == want


def test_gsm8k_few_shot_scoring(tmp_path: Path) -> None:
    answers = {"Tom has 40 apples": "40 + 2 = 42\n#### 42", "A box holds": "#### 1000"}
    with chat_server(answers) as (url, prompts):
        report = _run("gsm8k", url, tmp_path, num_shots=5, num_threads=2)
    assert (report["score"], report["correct"], report["attempts"]) == (0.5, 1, 2)
    assert len(prompts) == 2
    assert all(p.count("Question:") == 6 for p in prompts)  # 5 shots + the question
    assert report["failed_requests"] == 0


def test_multiple_choice_evals_with_repeat_and_categories(tmp_path: Path) -> None:
    answers = {
        "red planet": "Answer: B",
        "boiling point": "Answer: C",
        "plants absorb": "Answer: A",
    }
    with chat_server(answers) as (url, prompts):
        report = _run("mmlu", url, tmp_path, repeat=2, num_threads=4)
    assert (report["correct"], report["attempts"]) == (4, 6)
    assert report["per_category"] == {"astronomy": 1.0, "biology": 0.0, "physics": 1.0}
    # Requests run concurrently, so the order the server saw them in is not fixed.
    assert len(prompts) == 6 and any("A) Venus\nB) Mars" in p for p in prompts)


def test_gpqa_shuffles_the_correct_answer_deterministically(tmp_path: Path) -> None:
    questions = read_questions("gpqa", DATA / "gpqa.jsonl")
    gold = questions[0].gold
    line = next(x for x in questions[0].prompt_body.splitlines() if x.endswith(") Photon"))
    assert line.startswith(f"{gold})")
    assert read_questions("gpqa", DATA / "gpqa.jsonl") == questions


def test_longbench_filters_by_category_and_context(tmp_path: Path) -> None:
    with chat_server({"keeper's name": "Answer: A"}) as (url, prompts):
        report = _run(
            "longbenchv2", url, tmp_path, categories=["Single-Document QA"], max_context_length=100
        )
    assert report["attempts"] == 1 and report["score"] == 1.0
    assert "<text>" in prompts[0]


def test_all_requests_failing_is_an_error(tmp_path: Path) -> None:
    config = decode_run_config(
        msgspec.json.encode(
            {"benchmark": {"type": "mmlu", "num_examples": 1}, "endpoint": "http://127.0.0.1:9",
             "model_name": "m", "total_gpus": 1, "datasets_dir": str(DATA)}
        )
    )  # fmt: skip
    plan = build_plan(config, BuildContext(out_dir=tmp_path))
    with pytest.raises(
        BenchRequestError, match=r"mmlu: every request to http://127\.0\.0\.1:9 failed"
    ):
        run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event())


def test_bad_rows_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"question": "q", "answer": "no marker"}\n')
    with pytest.raises(
        BenchDatasetError, match=r"g\.jsonl:1: gsm8k answer must end in '#### <number>'"
    ):
        read_questions("gsm8k", bad)
