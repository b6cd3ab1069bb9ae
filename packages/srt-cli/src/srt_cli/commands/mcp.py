"""``srtctl mcp``: a Model Context Protocol server over stdio (the official ``mcp`` SDK)."""

from __future__ import annotations

from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.options import output_option

EPILOG = """\b
Examples:
  srtctl mcp                      # speak MCP on stdin/stdout (a client starts this)
  srtctl mcp -o /shared/outputs   # the output base jobs are read from and written to

\b
Client configuration (Claude Desktop, Cursor, VS Code style):
  {"mcpServers": {"srtctl": {"command": "srtctl", "args": ["mcp"], "cwd": "/path/to/recipes"}}}
"""

INSTRUCTIONS = (
    "srtctl: YAML recipe -> benchmark of an LLM serving deployment (Slurm, or here). Typical flow: "
    "validate (fix each error at its $.path), dry_run, apply (confirm: true; a local run), wait, "
    "then diagnose a failed job (cause and fix) or status/compare/report a finished one."
)


@click.command("mcp", epilog=EPILOG)
@output_option
@click.pass_obj
def command(edge: Edge, *, output: str | None) -> None:
    """Serve srtctl's tools to an MCP client over stdio.

    Tools: validate, explain, dry_run, apply (only with confirm: true), list_jobs, status, wait,
    logs (bounded), diagnose (the failure catalog's cause and fix), compare, report. Each runs the
    srtctl command of the same name with --json and returns its result.
    """
    from pathlib import Path

    from mcp.server.mcpserver import MCPServer

    from srt_cli.mcp_tools import Tools

    tools = Tools(cwd=Path.cwd(), output=output, environ=edge.environ)
    server = MCPServer("srtctl", instructions=INSTRUCTIONS)

    @server.tool()
    def validate(recipe: str | None = None, path: str | None = None) -> dict[str, Any]:
        """Load and plan a recipe (YAML text in `recipe`, or a file `path`). Returns ok, and
        errors as {file, path ($.a.b), message, fix}."""
        return tools.validate(recipe, path)

    @server.tool()
    def explain(field: str) -> dict[str, Any]:
        """Explain a recipe field (dotted path, e.g. benchmark.isl): its JSON Schema type,
        description and default, and its schema-ledger row (executed / refused / no-op)."""
        return tools.explain(field)

    @server.tool()
    def dry_run(
        recipe: str | None = None, path: str | None = None, full: bool = False
    ) -> dict[str, Any]:
        """Plan a recipe without running it: per job the processes, nodes, ports and health
        gate; `full: true` returns every JobPlan whole."""
        return tools.dry_run(recipe, path, full)

    @server.tool()
    def apply(
        confirm: bool,
        recipe: str | None = None,
        path: str | None = None,
        output: str | None = None,
        stand_in_engines: bool = False,
    ) -> dict[str, Any]:
        """Run a recipe here as a local job, in the background. Refused unless confirm is true.
        Returns the job_id to wait for."""
        return tools.apply(confirm, recipe, path, output, stand_in_engines)

    @server.tool()
    def list_jobs(output: str | None = None) -> dict[str, Any]:
        """The jobs of the output folder: id, name, status, stage, start, exit code."""
        return tools.list_jobs(output)

    @server.tool()
    def status(job: str, output: str | None = None) -> dict[str, Any]:
        """One job: stage, workers ready, benchmark phase, results, validity, cause of failure."""
        return tools.status(job, output)

    @server.tool()
    def wait(jobs: list[str], timeout: float = 600, output: str | None = None) -> dict[str, Any]:
        """Block until the jobs end (at most `timeout` s). exit_code 0: all completed with valid
        results; 10 invalid, 11 cancelled, 12 failed, 13 timed out, 14 unknown job."""
        return tools.wait(jobs, timeout, output)

    @server.tool()
    def logs(
        job: str, process: str | None = None, lines: int = 100, output: str | None = None
    ) -> dict[str, Any]:
        """A job's log files, or the last `lines` (at most 400) of one process's log."""
        return tools.logs(job, process, lines, output)

    @server.tool()
    def diagnose(job: str, output: str | None = None) -> dict[str, Any]:
        """How a job ended; for a failed job the failure catalog's cause, fix and evidence."""
        return tools.diagnose(job, output)

    @server.tool()
    def compare(runs: list[str]) -> dict[str, Any]:
        """KPI deltas with confidence intervals between job or sweep folders."""
        return tools.compare(runs)

    @server.tool()
    def report(sweep_dir: str) -> dict[str, Any]:
        """Write the HTML report of a sweep folder; returns the page's path."""
        return tools.report(sweep_dir)

    server.run("stdio")
