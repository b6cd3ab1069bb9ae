"""A mirror of the accuracy evals' published files, tiny, in their own forms, laid out as
`$SRT_DATASETS_MIRROR` expects (`<root>/<host>/<path>`, srt_bench.evals.sources): GSM8K's
`test.jsonl` (12 rows: 8 shots and 4 questions), simple-evals' `gpqa_diamond.csv` and `mmlu.csv`
(3 questions each). For the corpus-run tier and tests; the answers are arithmetic anyone can
check, the scores mean nothing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from srt_bench.evals.sources import EVAL_SOURCES
from srt_bench.plans import EvalName

__all__ = ["write_eval_mirror"]


def _target(root: Path, name: EvalName) -> Path:
    url = EVAL_SOURCES[name].url
    path = root / url.split("://", 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_eval_mirror(root: Path) -> list[Path]:
    """Write the files under `root`; returns their paths."""
    gsm8k = _target(root, "gsm8k")
    rows = [
        {"question": f"Tom has {n} apples and buys {n} more. How many now?",
         "answer": f"{n} + {n} = {2 * n}\n#### {2 * n}"}
        for n in range(1, 13)
    ]  # fmt: skip
    gsm8k.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gpqa = _target(root, "gpqa")
    with gpqa.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
                    "Incorrect Answer 3", "Subdomain"])  # fmt: skip
        for i in range(3):
            w.writerow([f"Which is {i + 1} + 1?", str(i + 2), "0", "10", "100", "Arithmetic"])
    mmlu = _target(root, "mmlu")
    with mmlu.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["", "Question", "A", "B", "C", "D", "Answer", "Subject"])
        for i in range(3):
            w.writerow([i, f"Which is {i + 1} + 1?", str(i + 2), "0", "10", "100", "A", "math"])
    return [gsm8k, gpqa, mmlu]
