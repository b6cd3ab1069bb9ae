#!/usr/bin/env python3
"""A stand-in for ``srun`` on machines without Slurm: drops the options, runs the task command.

Options are everything up to and including ``--job-name=...``; the rest is the task. The
options seen are printed to stdout (the step's log) so tests can check what srun was given.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    cut = next(i for i, a in enumerate(argv) if a.startswith("--job-name="))
    print("fake-srun options: " + " ".join(argv[: cut + 1]), flush=True)
    task = argv[cut + 1 :]
    os.execvp(task[0], task)


if __name__ == "__main__":
    main(sys.argv[1:])
