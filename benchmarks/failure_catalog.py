"""Precision and recall of the failure catalog, per cause, on a labelled set of real failures.

Run from the repository root:  uv run --frozen python benchmarks/failure_catalog.py
(`--samples FILE`, `--show-misses`). The set is benchmarks/data/failure_samples.yaml: log
excerpts quoted in public issue threads of SGLang, vLLM, TensorRT-LLM, Dynamo, NCCL (and a few
neighbours), each with its source, plus failures provoked on this machine. Its `held` quarter was
collected after the catalog was written and is reported separately. Each sample is matched the
way the runtime matches a failed process (srt_runtime.catalog.match_cause over its log lines and
exit code). A cause's precision is the share of samples given that cause that carry its label;
recall the share of samples with that label given it ("unknown cause" counts as no answer).
Prints tables; asserts nothing. Target (issue 33): precision >= 0.9 and recall >= 0.8 on `held`.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from srt_runtime.catalog import UNKNOWN_CAUSE, load_catalog, match_cause

HERE = Path(__file__).resolve().parent
SAMPLES = HERE / "data" / "failure_samples.yaml"


def _predict(sample: dict[str, Any]) -> str:
    engine = sample.get("engine")
    return match_cause(
        load_catalog(),
        [str(line) for line in sample["log"]],
        exit_code=sample.get("exit_code"),
        engine=None if engine in (None, "any") else str(engine),
    ).cause


def _table(split: str, rows: list[tuple[str, str, str]]) -> tuple[str, float, float]:
    """rows: (id, label, predicted). Returns the text, micro precision and micro recall."""
    labels = Counter(label for _, label, _ in rows)
    given = Counter(pred for _, _, pred in rows if pred != UNKNOWN_CAUSE)
    right = Counter(label for _, label, pred in rows if pred == label)
    lines = [
        f"{split}: {len(rows)} samples",
        f"  {'cause':<28} {'n':>3} {'precision':>9} {'recall':>7}",
    ]
    for cause in sorted(set(labels) | set(given)):
        p = right[cause] / given[cause] if given[cause] else float("nan")
        r = right[cause] / labels[cause] if labels[cause] else float("nan")
        lines.append(f"  {cause:<28} {labels[cause]:>3} {p:>9.2f} {r:>7.2f}")
    total_right = sum(right.values())
    precision = total_right / sum(given.values()) if given else float("nan")
    recall = total_right / len(rows) if rows else float("nan")
    unknown = sum(1 for _, _, pred in rows if pred == UNKNOWN_CAUSE)
    lines.append(
        f"  {'all (micro)':<28} {len(rows):>3} {precision:>9.2f} {recall:>7.2f}"
        f"   ({unknown} unknown cause)"
    )
    return "\n".join(lines), precision, recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    samples = yaml.safe_load(args.samples.read_text())["samples"]
    for split in ("dev", "held"):
        rows = [(s["id"], s["label"], _predict(s)) for s in samples if s["split"] == split]
        text, _, _ = _table(split, rows)
        print(text)
        if args.show_misses:
            for sid, label, pred in rows:
                if pred != label:
                    print(f"    miss {sid}: labelled {label}, catalog says {pred}")
        print()


if __name__ == "__main__":
    main()
