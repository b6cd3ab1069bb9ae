"""Pin ``source.rev`` to a commit at submit (docs/recipes.md#source-pinning), with ``git
ls-remote``.

Every mapping under a ``source`` key with ``git`` and ``rev`` but no ``sha`` gets ``sha``. A rev
that cannot be resolved leaves a warning and the job fetches the ref by name.
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Pin", "find_unpinned", "pin_document", "resolve_rev"]

_SHA = re.compile(r"^[0-9a-f]{4,40}$")


@dataclass(frozen=True)
class Pin:
    where: str
    rev: str
    sha: str

    def render(self) -> str:
        return f"{self.where}: {self.rev} -> {self.sha}"


def find_unpinned(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted path of the ``source`` mapping, the mapping) for each one that needs a sha."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}" if path else str(key)
            if key == "source" and isinstance(value, dict):
                rev = value.get("rev")
                if value.get("git") and rev and not value.get("sha") and not _SHA.match(str(rev)):
                    yield here, value
            yield from find_unpinned(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from find_unpinned(value, f"{path}[{i}]")


def resolve_rev(git: str, rev: str, *, environ: Mapping[str, str], timeout: float = 60.0) -> str:
    """The commit ``rev`` names in ``git`` (peeled tags first). Raises RuntimeError."""
    refs = [rev] if rev.startswith("refs/") else [rev, f"refs/tags/{rev}", f"refs/heads/{rev}"]
    # A pattern matches the tail of a ref name; the peeled ``^{}`` lines need their own pattern.
    patterns = [p for ref in refs for p in (ref, f"{ref}^{{}}")]
    command = ["git", "-c", "http.version=HTTP/1.1", "ls-remote", git, *patterns]
    done = subprocess.run(
        command,
        env={**environ, "GIT_TERMINAL_PROMPT": "0"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"git ls-remote exited {done.returncode}")
    found: dict[str, str] = {}
    for line in done.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        found[ref] = sha
    for ref in refs:
        for candidate in (f"{ref}^{{}}", ref):
            if candidate in found:
                return found[candidate]
    for ref, sha in sorted(found.items()):
        if ref.endswith(f"/{rev}^{{}}") or ref.endswith(f"/{rev}"):
            return sha
    raise RuntimeError(f"no ref named {rev!r}")


def pin_document(
    document: dict[str, Any],
    *,
    resolve: Callable[[str, str], str],
    warn: Callable[[str], None],
) -> tuple[dict[str, Any], list[Pin]]:
    """A copy of ``document`` with ``sha`` next to every resolvable ``rev``, and the pins made."""
    pinned = copy.deepcopy(document)
    pins: list[Pin] = []
    for where, source in find_unpinned(pinned):
        rev = str(source["rev"])
        try:
            sha = resolve(str(source["git"]), rev)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            warn(
                f"{where}: could not pin rev {rev!r} ({exc}); the job will fetch the ref by "
                "name and any build cache keys on the ref, not the commit"
            )
            continue
        source["sha"] = sha
        pins.append(Pin(where=where, rev=rev, sha=sha))
    return pinned, pins
