"""The tools of ``srtctl mcp``, as plain functions (no MCP import here; ``commands/mcp.py``
registers them on the SDK's server).

Each tool runs the ``srtctl`` command that already does the job, with ``--json``, in a subprocess of
this interpreter, and returns its JSON: one behaviour, whether a person or an agent asks. Outputs
are bounded (log lines, plan summaries) so an agent's context is not flooded. ``apply`` starts a
local run in the background and returns its job id; it refuses unless ``confirm`` is true.

Why one module of ~300 lines: the tools share the runner and are small; each is a few lines.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["MAX_LOG_LINES", "Tools"]

#: The most log lines one ``logs`` call returns.
MAX_LOG_LINES = 400
_SRTCTL = [sys.executable, "-c", "from srt_cli.main import main; main()"]
_SUMMARY_KEYS = ("name", "kind", "role", "nodes", "node", "ports", "critical")
_LEDGER_ROW = re.compile(r"^\|\s*`(?P<path>[^`]+)`\s*\|(?P<rest>.*)$")


def _json_lines(text: str) -> list[Any]:
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("{", "[")):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _fix_of(message: str) -> str:
    """The "what to do instead" part of a validation message (after its last '; '), if any."""
    parts = message.rsplit("; ", 1)
    return parts[1] if len(parts) == 2 else ""


class Tools:
    """The tools, bound to a working folder, an output base and an environment."""

    def __init__(self, *, cwd: Path, output: str | None, environ: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.output = output
        self.environ = dict(environ)

    # -- plumbing -----------------------------------------------------------------------------

    def _run(self, args: Sequence[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*_SRTCTL, *args],
            cwd=self.cwd,
            env=self.environ,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def _out(self, output: str | None) -> list[str]:
        chosen = output or self.output
        return ["-o", chosen] if chosen else []

    def _base(self, output: str | None) -> Path:
        chosen = output or self.output or "outputs"
        path = Path(chosen)
        return path if path.is_absolute() else self.cwd / path

    @staticmethod
    def _error(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        return {"ok": False, "exit_code": done.returncode, "error": done.stderr.strip()[-4000:]}

    def _recipe_file(self, recipe: str | None, path: str | None) -> str:
        """A recipe given as text is written under <cwd>/.srtctl-mcp/ (the run keeps it)."""
        if path:
            return path
        if recipe is None:
            raise ValueError("give the recipe as `recipe` (YAML text) or `path` (a file)")
        folder = self.cwd / ".srtctl-mcp"
        folder.mkdir(exist_ok=True)
        target = folder / f"recipe-{time.strftime('%Y%m%dT%H%M%S')}-{time.monotonic_ns()}.yaml"
        target.write_text(recipe)
        return str(target)

    # -- tools --------------------------------------------------------------------------------

    def validate(self, recipe: str | None = None, path: str | None = None) -> dict[str, Any]:
        """Load and plan the recipe; errors carry the file, the $.path, the message and the fix."""
        file = self._recipe_file(recipe, path)
        done = self._run(["validate", "-f", file, "--json"])
        docs = _json_lines(done.stdout)
        errors = [
            {**e, "fix": _fix_of(str(e.get("message", "")))}
            for doc in docs
            for e in doc.get("errors", [])
        ]
        ok = done.returncode == 0 and all(d.get("ok") for d in docs)
        jobs = sum(int(d.get("jobs", 0)) for d in docs)
        return {"ok": ok, "file": file, "jobs": jobs, "errors": errors}

    def explain(self, field: str) -> dict[str, Any]:
        """A recipe field's schema (type, description, default, enum) and its schema-ledger row."""
        done = self._run(["schema"])
        if done.returncode != 0:
            return self._error(done)
        schema = json.loads(done.stdout)
        node: Any = schema.get("$defs", {}).get("Recipe", schema)
        for part in field.removeprefix("$.").split("."):
            props = _properties(schema, node)
            if part not in props:
                known = sorted(props)
                return {"ok": False, "field": field, "error": f"no field {part!r} here",
                        "known": known}  # fmt: skip
            node = props[part]
        node = _resolve(schema, node)
        keep = ("type", "description", "default", "enum", "minimum", "maximum", "examples")
        info = {k: node[k] for k in keep if isinstance(node, dict) and k in node}
        return {"ok": True, "field": field, "schema": info, "ledger": self._ledger(field)}

    def _ledger(self, field: str) -> str | None:
        # the working folder's checkout, else the one srtctl runs from (an editable install)
        here = Path(__file__).resolve()
        for folder in (self.cwd, *self.cwd.parents, *here.parents):
            ledger = folder / "docs" / "schema-ledger.md"
            if ledger.is_file():
                for line in ledger.read_text().splitlines():
                    match = _LEDGER_ROW.match(line)
                    if match and match["path"].removeprefix("$.") == field.removeprefix("$."):
                        return line.strip()
                return None
        return None

    def dry_run(
        self, recipe: str | None = None, path: str | None = None, full: bool = False
    ) -> dict[str, Any]:
        """The plan of every job: a summary (processes, nodes, ports, health gate), or the whole
        JobPlan with ``full``."""
        file = self._recipe_file(recipe, path)
        done = self._run(["dry-run", "-f", file, "--json", "--stand-in-engines"])
        if done.returncode != 0:
            done = self._run(["dry-run", "-f", file, "--json"])
        if done.returncode != 0:
            return self._error(done)
        plans = _json_lines(done.stdout)
        if full:
            return {"ok": True, "plans": plans}
        return {"ok": True, "jobs": [_summarise(p) for p in plans]}

    def apply(
        self,
        confirm: bool,
        recipe: str | None = None,
        path: str | None = None,
        output: str | None = None,
        stand_in_engines: bool = False,
    ) -> dict[str, Any]:
        """Start the recipe as a local run in the background; only with ``confirm: true``."""
        if not confirm:
            return {"ok": False, "error": "apply starts real processes: call it again with "
                    "confirm: true once the dry-run is what you want"}  # fmt: skip
        file = self._recipe_file(recipe, path)
        base = self._base(output)
        before = set(p.name for p in base.iterdir()) if base.is_dir() else set()
        args = ["apply", "-f", file, "--local", "--json", "-y", "-o", str(base)]
        if stand_in_engines:
            args.append("--stand-in-engines")
        log = self.cwd / ".srtctl-mcp" / f"apply-{time.monotonic_ns()}.log"
        log.parent.mkdir(exist_ok=True)
        with log.open("w") as sink:
            child = subprocess.Popen(  # our own CLI, an argv list
                [*_SRTCTL, *args], cwd=self.cwd, env=self.environ, stdout=sink,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            new = sorted(set(p.name for p in base.iterdir()) - before) if base.is_dir() else []
            jobs = [n for n in new if n.startswith("local-")]
            if jobs:
                return {"ok": True, "job_id": jobs[0], "job_dir": str(base / jobs[0]),
                        "apply_pid": child.pid, "apply_log": str(log)}  # fmt: skip
            if child.poll() is not None:
                break
            time.sleep(0.2)
        return {"ok": False, "exit_code": child.poll(), "error": log.read_text()[-4000:]}

    def list_jobs(self, output: str | None = None) -> dict[str, Any]:
        done = self._run(["list", "--json", *self._out(output)])
        return json.loads(done.stdout) if done.returncode == 0 else self._error(done)

    def status(self, job: str, output: str | None = None) -> dict[str, Any]:
        done = self._run(["status", job, "--json", *self._out(output)])
        return json.loads(done.stdout) if done.returncode == 0 else self._error(done)

    def wait(
        self, jobs: list[str], timeout: float = 600, output: str | None = None
    ) -> dict[str, Any]:
        """Block until the jobs end (at most ``timeout`` seconds); the outcomes and wait's exit."""
        args = ["wait", *jobs, "--json", "--timeout", str(timeout), "--interval", "0.5"]
        done = self._run([*args, *self._out(output)], timeout=timeout + 60)
        return {"exit_code": done.returncode, "jobs": _json_lines(done.stdout),
                "error": done.stderr.strip()[-2000:]}  # fmt: skip

    def logs(
        self, job: str, process: str | None = None, lines: int = 100, output: str | None = None
    ) -> dict[str, Any]:
        """A job's log files, or the last ``lines`` (at most MAX_LOG_LINES) of one process's log."""
        if process is None:
            done = self._run(["logs", job, "--json", *self._out(output)])
            return json.loads(done.stdout) if done.returncode == 0 else self._error(done)
        count = max(1, min(lines, MAX_LOG_LINES))
        done = self._run(["logs", job, "-p", process, "-n", str(count), *self._out(output)])
        if done.returncode != 0:
            return self._error(done)
        text = done.stdout.splitlines()[-count:]
        return {"ok": True, "job_id": job, "process": process, "lines": text}

    def diagnose(self, job: str, output: str | None = None) -> dict[str, Any]:
        """How the job ended and, for a failed one, the failure catalog's cause and fix."""
        summary = self.status(job, output)
        if "job_id" not in summary:
            return summary
        cause = summary.get("cause")
        return {
            "job_id": summary["job_id"],
            "status": summary["status"],
            "exit_code": summary["exit_code"],
            "message": summary["message"],
            "cause": cause["cause"] if cause else None,
            "title": cause["title"] if cause else None,
            "fix": cause["fix"] if cause else None,
            "evidence": cause["evidence"] if cause else None,
            "failed_process": cause["what"] if cause else None,
            "errors": summary["errors"][-5:],
        }

    def compare(self, runs: list[str]) -> dict[str, Any]:
        done = self._run(["compare", *runs, "--json", "--resamples", "200"])
        return json.loads(done.stdout) if done.returncode == 0 else self._error(done)

    def report(self, sweep_dir: str) -> dict[str, Any]:
        done = self._run(["report", sweep_dir])
        if done.returncode != 0:
            return self._error(done)
        return {"ok": True, "page": done.stdout.strip().splitlines()[-1] if done.stdout else ""}


def _resolve(schema: dict[str, Any], node: Any) -> Any:
    """Follow ``$ref`` (and a single-branch anyOf/allOf) to the node that has properties."""
    for _ in range(10):
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = str(node["$ref"]).removeprefix("#/").split("/")
            target: Any = schema
            for part in ref:
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            continue
        for key in ("anyOf", "allOf", "oneOf"):
            branches = [b for b in node.get(key, []) if b.get("type") != "null"]
            if len(branches) == 1:
                node = {**branches[0], **{k: v for k, v in node.items() if k != key}}
                break
        else:
            return node
    return node


def _properties(schema: dict[str, Any], node: Any) -> dict[str, Any]:
    """The properties of a node, merged over its anyOf/oneOf/allOf branches (first one wins)."""
    node = _resolve(schema, node)
    if not isinstance(node, dict):
        return {}
    found: dict[str, Any] = {}
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key, []):
            for name, value in _properties(schema, branch).items():
                found.setdefault(name, value)
    return {**found, **node.get("properties", {})}


def _summarise(plan: Mapping[str, Any]) -> dict[str, Any]:
    processes = plan.get("processes", [])
    return {
        "job_name": plan.get("job_name"),
        "launcher": plan.get("launcher"),
        "processes": [{k: p[k] for k in _SUMMARY_KEYS if k in p} for p in processes][:60],
        "process_count": len(processes),
        "health": plan.get("health"),
        "frontend_url": plan.get("frontend_url"),
    }
