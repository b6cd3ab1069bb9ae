"""Evaluation questions (pure parsing; `read_questions` reads the file, in any form
`formats.read_rows` reads).

Rows (one object per JSON Lines line):
- gsm8k: `{"question": str, "answer": str}`, the answer ending in `#### <number>` (GSM8K's own).
- mmlu / gpqa: `{"question": str, "choices": [4 str], "answer": 0-3 or "A"-"D", "subject"?: str}`;
  gpqa also accepts `{"question", "correct_answer", "incorrect_answers": [3 str]}` (choices are
  then shuffled deterministically per question).
- longbenchv2: `{"question", "context", "choice_A" … "choice_D", "answer": "A"-"D",
  "domain"?: str}` (LongBench v2's own), filtered by `categories` on `domain`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.errors import BenchDatasetError
from srt_bench.evals.formats import read_rows
from srt_bench.plans import EvalName

__all__ = ["Question", "parse_question", "read_questions"]

LETTERS = "ABCD"
_GSM_ANSWER = re.compile(r"####\s*(.+)$")


class Question(msgspec.Struct, frozen=True, kw_only=True):
    prompt_body: str
    #: Gold answer: a normalized number (gsm8k) or a letter A-D.
    gold: str
    category: str = ""
    #: For few-shot gsm8k: the worked solution shown in shots.
    solution: str = ""
    context_words: int = 0


def normalize_number(text: str) -> str:
    cleaned = text.replace(",", "").replace("$", "").strip().rstrip(".")
    try:
        value = float(cleaned)
    except ValueError:
        return cleaned
    return str(int(value)) if value.is_integer() else str(value)


def _mc_body(question: str, choices: Sequence[str]) -> str:
    lines = [question.strip(), ""]
    lines += [f"{LETTERS[i]}) {c}" for i, c in enumerate(choices)]
    return "\n".join(lines)


def _letter(answer: Any, where: str) -> str:
    if isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < 4:
        return LETTERS[answer]
    if isinstance(answer, str) and answer.strip().upper() in LETTERS:
        return answer.strip().upper()
    raise BenchDatasetError(f"{where}: answer {answer!r} is neither 0-3 nor A-D")


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise BenchDatasetError(f"{where}: field {key!r} must be a string, got {value!r}")
    return value


def parse_question(name: EvalName, row: dict[str, Any], where: str, index: int) -> Question:
    match name:
        case "gsm8k":
            answer = _text(row, "answer", where)
            m = _GSM_ANSWER.search(answer.strip())
            if m is None:
                raise BenchDatasetError(f"{where}: gsm8k answer must end in '#### <number>'")
            return Question(
                prompt_body=_text(row, "question", where),
                gold=normalize_number(m.group(1)),
                solution=answer.strip(),
            )
        case "mmlu" | "gpqa":
            question = _text(row, "question", where)
            if "choices" in row:
                choices = row["choices"]
                if not (isinstance(choices, list) and len(choices) == 4):
                    raise BenchDatasetError(f"{where}: 'choices' must be a list of 4 strings")
                gold = _letter(row.get("answer"), where)
            elif name == "gpqa" and "correct_answer" in row:
                wrong = row.get("incorrect_answers")
                if not (isinstance(wrong, list) and len(wrong) == 3):
                    raise BenchDatasetError(f"{where}: 'incorrect_answers' must list 3 strings")
                choices = [_text(row, "correct_answer", where), *wrong]
                order = list(range(4))
                random.Random(index).shuffle(order)
                choices = [choices[i] for i in order]
                gold = LETTERS[order.index(0)]
            else:
                raise BenchDatasetError(f"{where}: needs 'choices' and 'answer'")
            return Question(
                prompt_body=_mc_body(question, [str(c) for c in choices]),
                gold=gold,
                category=str(row.get("subject", "")),
            )
        case "longbenchv2":
            choices = [_text(row, f"choice_{x}", where) for x in LETTERS]
            context = _text(row, "context", where)
            body = (
                "Please read the following text and answer the question below.\n\n"
                f"<text>\n{context.strip()}\n</text>\n\n"
                + _mc_body(_text(row, "question", where), choices)
            )
            return Question(
                prompt_body=body,
                gold=_letter(row.get("answer"), where),
                category=str(row.get("domain", "")),
                context_words=len(context.split()),
            )


def read_questions(name: EvalName, path: Path) -> list[Question]:
    """Every question of the file (any form `formats.read_rows` reads)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchDatasetError(
            f"cannot read the {name} dataset {path}: {exc.strerror}; set benchmark.dataset_path"
        ) from exc
    out: list[Question] = []
    for where, row in read_rows(path, data):
        out.append(parse_question(name, row, where, len(out)))
    if not out:
        raise BenchDatasetError(f"{path}: the {name} dataset has no questions")
    return out
