"""How fast, and in how much memory, the bounded YAML loader refuses hostile documents.

    uv run --frozen python benchmarks/yaml_limits.py

Each case runs in a fresh child process (so its peak RSS is its own) and prints: the document's
size, the wall time of the call, the child's peak RSS and the first line of the refusal. A
billion-laughs document of under 1 KB in ``roles.*.args`` or ``sweep:`` used to grow
``srtctl validate`` to gigabytes; the loader refuses it after ``expanded_nodes`` values.
"""

from __future__ import annotations

import json
import subprocess
import sys

_HEAD = (
    "schema: 2\nname: bomb\nmodel: {path: /m, container: c, precision: fp8}\n"
    "resources: {gpus_per_node: 4}\nengine: sglang\n"
)


def _bomb(indent: str, levels: int = 9, width: int = 9) -> str:
    xs = ", ".join(["x"] * width)
    lines = [f"{indent}l0: &l0 [{xs}]"]
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * width)
        lines.append(f"{indent}l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def _flow_bomb(levels: int = 9, width: int = 9) -> str:
    items = ["&l0 [" + ", ".join(["x"] * width) + "]"]
    items += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "[" + ", ".join(items) + "]"


CASES: dict[str, tuple[str, str]] = {
    "alias bomb in roles.agg.args": (
        "recipe",
        _HEAD + "roles:\n  agg:\n    nodes: 1\n    args:\n" + _bomb("      "),
    ),
    "alias bomb in sweep": ("recipe", _HEAD + "sweep:\n" + _bomb("  ")),
    "alias bomb through --set": ("set", "roles.agg.args.x=" + _flow_bomb()),
    "alias bomb to migrate": ("migrate", "name: x\nbackend:\n  args:\n" + _bomb("    ")),
    "self-referencing alias": ("recipe", _HEAD + "roles: &r {agg: {args: *r}}\n"),
    "nesting 100000 deep": ("recipe", "a: " + "[" * 100_000 + "]" * 100_000 + "\n"),
    "4 MiB + 1 document": ("recipe", "a: x\n" + "#" * (4 * 1024 * 1024 - 4)),
}

_CHILD = r"""
import json, resource, sys, time
kind, text = json.loads(sys.stdin.read())
from srt_schema import load_recipe_text, parse_set
from srt_schema.errors import SchemaError
from srt_schema.migrate import migrate_text
started = time.perf_counter()
try:
    if kind == "recipe":
        load_recipe_text(text, file="case.yaml")
    elif kind == "set":
        parse_set(text)
    else:
        migrate_text(text, file="case.yaml")
    outcome = "accepted"
except SchemaError as exc:
    outcome = str(exc).splitlines()[0]
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(json.dumps([elapsed, peak, outcome]))
"""


def main() -> int:
    print(f"{'case':32} {'bytes':>9} {'ms':>8} {'peak MiB':>9}  outcome")
    for name, (kind, text) in CASES.items():
        done = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps([kind, text]),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            print(f"{name:32} child failed ({done.returncode}): {done.stderr.strip()[-300:]}")
            continue
        elapsed, peak, outcome = json.loads(done.stdout)
        print(f"{name:32} {len(text):>9} {elapsed * 1000:>8.1f} {peak:>9}  {outcome[:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
