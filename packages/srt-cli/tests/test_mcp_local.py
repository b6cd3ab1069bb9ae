"""``srtctl mcp`` end to end with the official SDK's own client over stdio: validate a broken
recipe, fix it from the returned $.paths, apply it locally, wait, and read the cause of a provoked
failure, all through tools, against real local jobs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from cli_testkit import DATA

mcp = pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def _result(call: Any) -> dict[str, Any]:
    assert not call.is_error, call.content
    if call.structured_content is not None:
        doc = call.structured_content
        return doc.get("result", doc) if isinstance(doc, dict) and len(doc) == 1 else doc
    return json.loads(call.content[0].text)  # type: ignore[no-any-return]


async def _session_flow(work: Path, env: dict[str, str]) -> dict[str, Any]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from srt_cli.main import main; main()", "mcp", "-o", str(work / "out")],
        env=env,
        cwd=str(work),
    )
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        seen["tools"] = names
        # 1. a broken recipe: a negative GPU count
        doc = yaml.safe_load((DATA / "hello-service.yaml").read_text())
        doc["resources"]["gpus_per_node"] = -1
        broken = _result(await session.call_tool("validate", {"recipe": yaml.safe_dump(doc)}))
        seen["broken"] = broken
        # 2. fix it at the returned path
        for error in broken["errors"]:
            keys = error["path"].removeprefix("$.").split(".")
            target = doc
            for key in keys[:-1]:
                target = target[key]
            target[keys[-1]] = 1
        # the service fails in a known way: it writes to a full disk
        doc["services"][0]["command"] = [
            sys.executable, "-c", "open('/dev/full', 'w').write('x' * 100000)"
        ]  # fmt: skip
        fixed_text = yaml.safe_dump(doc)
        seen["fixed"] = _result(await session.call_tool("validate", {"recipe": fixed_text}))
        seen["explain"] = _result(await session.call_tool("explain", {"field": "benchmark.type"}))
        seen["dry_run"] = _result(await session.call_tool("dry_run", {"recipe": fixed_text}))
        # 3. apply: refused without confirm, started with it
        seen["refused"] = _result(
            await session.call_tool("apply", {"recipe": fixed_text, "confirm": False})
        )
        applied = _result(await session.call_tool("apply", {"recipe": fixed_text, "confirm": True}))
        seen["applied"] = applied
        job = applied["job_id"]
        # 4. wait, then the cause
        seen["wait"] = _result(await session.call_tool("wait", {"jobs": [job], "timeout": 120}))
        seen["diagnose"] = _result(await session.call_tool("diagnose", {"job": job}))
        seen["logs"] = _result(
            await session.call_tool("logs", {"job": job, "process": "supervisor", "lines": 5})
        )
        seen["list"] = _result(await session.call_tool("list_jobs", {}))
    return seen


def test_an_agent_validates_fixes_applies_waits_and_reads_the_cause(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "bash").symlink_to("/bin/bash")  # no sbatch: apply runs the job here
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SRTCTL_"))}
    env["PATH"] = str(folder)
    seen = anyio.run(_session_flow, tmp_path, env)

    assert {"validate", "explain", "dry_run", "apply", "list_jobs", "status", "wait", "logs",
            "diagnose", "compare", "report"} <= seen["tools"]  # fmt: skip
    broken = seen["broken"]
    assert broken["ok"] is False
    assert [e["path"] for e in broken["errors"]] == ["$.resources.gpus_per_node"]
    assert broken["errors"][0]["message"]
    assert seen["fixed"] == {**seen["fixed"], "ok": True, "errors": []}
    explained = seen["explain"]
    assert explained["ok"] is True and explained["schema"]["description"], explained
    assert explained["ledger"].startswith("| `benchmark.type` | executed |"), explained
    assert seen["dry_run"]["jobs"][0]["job_name"] == "hello"
    assert seen["refused"]["ok"] is False and "confirm" in seen["refused"]["error"]
    assert seen["applied"]["ok"] is True
    wait = seen["wait"]
    assert wait["exit_code"] == 12, wait
    assert wait["jobs"][0]["outcome"] == "failed"
    diagnosis = seen["diagnose"]
    assert (diagnosis["status"], diagnosis["cause"]) == ("failed", "disk_full"), diagnosis
    assert diagnosis["fix"].startswith("Free space on the file system")
    assert 0 < len(seen["logs"]["lines"]) <= 5
    assert [j["job_id"] for j in seen["list"]["jobs"]] == [seen["applied"]["job_id"]]
