"""Prompts and answer extraction of the evaluators (pure)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from srt_bench.evals.datasets import Question, normalize_number
from srt_bench.plans import EvalName

__all__ = ["build_prompt", "extract_answer", "is_correct"]

_MC_INSTRUCTION = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the form 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD.\n\n"
)
_NUMBER = re.compile(r"-?[\d,]*\.?\d+")
_MC_ANSWER = re.compile(r"(?i)answer\s*(?:is)?\s*:?\s*\(?\s*([ABCD])\b")


def build_prompt(name: EvalName, question: Question, shots: Sequence[Question]) -> str:
    match name:
        case "gsm8k":
            parts = [f"Question: {s.prompt_body}\nAnswer: {s.solution}\n\n" for s in shots]
            parts.append(f"Question: {question.prompt_body}\nAnswer:")
            return "".join(parts)
        case "mmlu" | "gpqa" | "longbenchv2":
            return _MC_INSTRUCTION + question.prompt_body


def extract_answer(name: EvalName, response: str) -> str | None:
    """gsm8k: the last number (after `####` when present); multiple choice: the last
    `Answer: X`, else a lone letter on the last line."""
    match name:
        case "gsm8k":
            tail = response.rsplit("####", maxsplit=1)[-1] if "####" in response else response
            numbers = _NUMBER.findall(tail)
            return normalize_number(numbers[-1]) if numbers else None
        case "mmlu" | "gpqa" | "longbenchv2":
            found = _MC_ANSWER.findall(response)
            if found:
                return str(found[-1]).upper()
            last = response.strip().splitlines()[-1].strip() if response.strip() else ""
            letter = last.strip("().: ").upper()
            return letter if letter in {"A", "B", "C", "D"} else None


def is_correct(name: EvalName, question: Question, response: str) -> bool:
    return extract_answer(name, response) == question.gold
