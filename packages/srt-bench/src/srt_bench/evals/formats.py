"""Rows of an eval's dataset file, by its suffix: our JSON Lines, or a published file's own form.

- `.jsonl`: one JSON object per line (the form `datasets.parse_question` documents; GSM8K's
  `test.jsonl` is already in it);
- `.csv`: simple-evals' MMLU (`Question, A, B, C, D, Answer, Subject`) or GPQA
  (`Question, Correct Answer, Incorrect Answer 1-3, Subdomain`) columns, mapped to that form;
- `.json`: a JSON array of objects (LongBench v2's `data.json`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.errors import BenchDatasetError

__all__ = ["read_rows"]

Row = tuple[str, dict[str, Any]]


def _jsonl(path: Path, data: bytes) -> Iterator[Row]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            raise BenchDatasetError(f"{where}: not valid JSON: {exc}") from exc
        if not isinstance(row, dict):
            raise BenchDatasetError(f"{where}: expected a JSON object")
        yield where, row


def _csv_row(row: dict[str, str], where: str) -> dict[str, Any]:
    if "Correct Answer" in row:
        return {
            "question": row.get("Question", ""),
            "correct_answer": row["Correct Answer"],
            "incorrect_answers": [row.get(f"Incorrect Answer {i}", "") for i in (1, 2, 3)],
            "subject": row.get("Subdomain", ""),
        }
    if all(k in row for k in ("Question", "A", "B", "C", "D", "Answer")):
        return {
            "question": row["Question"],
            "choices": [row[k] for k in "ABCD"],
            "answer": row["Answer"],
            "subject": row.get("Subject", ""),
        }
    raise BenchDatasetError(
        f"{where}: a CSV row needs MMLU's columns (Question, A-D, Answer) or GPQA's "
        f"(Question, Correct Answer, Incorrect Answer 1-3); got {', '.join(sorted(row))}"
    )


def _csv(path: Path, data: bytes) -> Iterator[Row]:
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig")))
    for number, row in enumerate(reader, start=2):
        where = f"{path}:{number}"
        yield where, _csv_row(row, where)


def _json_array(path: Path, data: bytes) -> Iterator[Row]:
    try:
        doc = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise BenchDatasetError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(doc, list):
        raise BenchDatasetError(f"{path}: expected a JSON array of objects")
    for index, row in enumerate(doc):
        where = f"{path}[{index}]"
        if not isinstance(row, dict):
            raise BenchDatasetError(f"{where}: expected a JSON object")
        yield where, row


def read_rows(path: Path, data: bytes) -> Iterator[Row]:
    """`(where, row)` for every row of `data` read from `path` (the suffix picks the form)."""
    match path.suffix.lower():
        case ".csv":
            return _csv(path, data)
        case ".json":
            return _json_array(path, data)
        case _:
            return _jsonl(path, data)
