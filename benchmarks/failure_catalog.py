"""Precision and recall of the failure catalog, per cause, on a labelled set of real failures.

Run from the repository root:  uv run --frozen python benchmarks/failure_catalog.py
(`--samples FILE`, `--split dev|held`, `--show-misses`). The set is
benchmarks/data/failure_samples.yaml: log excerpts quoted in public issue threads of SGLang, vLLM,
TensorRT-LLM, Dynamo, NCCL, NIXL, Mooncake (and a few neighbours), each with its source, plus
failures provoked on this machine. Its `held` samples were kept out of the catalog's development
and are reported separately (the file's header says how they were chosen). Each sample is matched
the way the runtime matches a failed process (srt_runtime.catalog.match_cause over its log lines
and exit code).

A sample's label is either a catalog cause or a cause the catalog does not have (its right answer
is then "unknown cause"). A cause's precision is the share of samples given that cause that carry
its label; its recall the share of samples with that label given it. The micro precision is over
every sample given a cause (a sample of an uncatalogued cause given one is a false positive);
the micro recall is over the samples whose label is a catalog cause ("unknown cause" counts as no
answer). Prints tables; asserts nothing. Target (issue 33): precision >= 0.9 and recall >= 0.8 on
`held`.
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
SPLITS = ("dev", "held")


def _predict(sample: dict[str, Any]) -> str:
    engine = sample.get("engine")
    return match_cause(
        load_catalog(),
        [str(line) for line in sample["log"]],
        exit_code=sample.get("exit_code"),
        engine=None if engine in (None, "any") else str(engine),
    ).cause


def _table(split: str, rows: list[tuple[str, str, str]], known: set[str]) -> str:
    """rows: (id, label, predicted); known: the catalog's cause ids."""
    labels = Counter(label for _, label, _ in rows)
    given = Counter(pred for _, _, pred in rows if pred != UNKNOWN_CAUSE)
    right = Counter(label for _, label, pred in rows if pred == label)
    outside = [(label, pred) for _, label, pred in rows if label not in known]
    lines = [
        f"{split}: {len(rows)} samples ({len(rows) - len(outside)} of catalog causes, "
        f"{len(outside)} of causes the catalog lacks)",
        f"  {'cause':<28} {'n':>3} {'precision':>9} {'recall':>7}",
    ]
    for cause in sorted((set(labels) | set(given)) & known):
        p = right[cause] / given[cause] if given[cause] else float("nan")
        r = right[cause] / labels[cause] if labels[cause] else float("nan")
        lines.append(f"  {cause:<28} {labels[cause]:>3} {p:>9.2f} {r:>7.2f}")
    in_catalog = len(rows) - len(outside)
    total_right = sum(right.values())
    precision = total_right / sum(given.values()) if given else float("nan")
    recall = total_right / in_catalog if in_catalog else float("nan")
    unknown = sum(1 for _, label, pred in rows if pred == UNKNOWN_CAUSE and label in known)
    lines.append(
        f"  {'all (micro)':<28} {in_catalog:>3} {precision:>9.2f} {recall:>7.2f}"
        f"   ({unknown} unknown cause)"
    )
    named = sum(1 for _, pred in outside if pred != UNKNOWN_CAUSE)
    lines.append(
        f"  {'causes not in the catalog':<28} {len(outside):>3}"
        f"   ({len(outside) - named} said unknown cause, {named} given a catalog cause)"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--split", choices=SPLITS, action="append", help="default: both")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    samples = yaml.safe_load(args.samples.read_text())["samples"]
    known = {cause.id for cause in load_catalog().causes}
    for split in args.split or SPLITS:
        rows = [(s["id"], s["label"], _predict(s)) for s in samples if s["split"] == split]
        print(_table(split, rows, known))
        if args.show_misses:
            for sid, label, pred in rows:
                if pred != label and not (label not in known and pred == UNKNOWN_CAUSE):
                    print(f"    miss {sid}: labelled {label}, catalog says {pred}")
        print()


if __name__ == "__main__":
    main()
