"""Per-command setup shared by dry-run, render, preflight and apply: cluster, paths, overrides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from srt_cli.environment import Cluster, Edge, read_cluster
from srt_cli.inputs import Source
from srt_cli.options import parse_overrides

if TYPE_CHECKING:
    from srt_cli.planning import PlannedJob
    from srt_planner.plan import StandIn
    from srt_planner.post_eval import EvalRequest
    from srt_schema.cluster import ClusterConfig
    from srt_schema.setpaths import PathOverride

__all__ = ["Session", "open_session"]


@dataclass(frozen=True)
class Session:
    edge: Edge
    cluster: Cluster
    effective: ClusterConfig
    output_base: str
    python: str
    overrides: tuple[PathOverride, ...]
    #: ``--stand-in-engines``: the GPU engines are replaced by stand-ins (srt_planner.stand_in).
    stand_in: StandIn | None = None
    #: Check engine/router flags against their catalogs (validate, dry-run, apply); False with
    #: ``--skip-flag-check`` (the plan then says ``flag_check: skipped``); None: not checked.
    check_flags: bool | None = None

    def plan_source(
        self,
        source: Source,
        *,
        serve_only: bool = False,
        force_sweep: bool = False,
        staging: str | None = None,
    ) -> list[PlannedJob]:
        """Load every job of ``source`` and plan each on simulated nodes."""
        from srt_cli.jobfiles import config_text
        from srt_cli.loading import load_jobs
        from srt_cli.planning import plan_one

        jobs = load_jobs(
            source,
            cluster=self.cluster.config,
            overrides=self.overrides,
            force_sweep=force_sweep,
            tokenizer=self.stand_in.model if self.stand_in is not None else None,
        )
        planned = [
            plan_one(
                job,
                self.effective,
                output_base=self.output_base,
                python=self.python,
                config_text=config_text(job),
                runner_name=self.edge.runner_name,
                serve_only=serve_only,
                environment=self.script_environment(),
                staging=staging,
                eval_request=self.eval_request(),
                edge=self.edge,
                stand_in=self.stand_in,
            )
            for job in jobs
        ]
        if self.check_flags is None:
            return planned
        import dataclasses

        import msgspec

        from srt_cli.flagcheck import enforce

        out = []
        for one in planned:
            if self.check_flags:
                enforce(one, self.effective)
            status = "checked" if self.check_flags else "skipped"
            plan = msgspec.structs.replace(one.plan, flag_check=status)
            out.append(dataclasses.replace(one, plan=plan))
        return out

    def eval_request(self) -> EvalRequest:
        """RUN_EVAL / EVAL_ONLY of this shell: the batch job inherits them (sbatch exports the
        submitting environment), so the plan shown and submitted has the eval step they ask for."""
        from srt_planner.post_eval import build_eval_request

        return build_eval_request(self.edge.environ)

    def script_environment(self) -> dict[str, str]:
        """Exported by the batch script so the in-allocation runtime plans the job as shown: the
        same cluster file, and the stand-in mode (``SRTCTL_STAND_IN_MODEL``)."""
        from srt_planner.stand_in import STAND_IN_ENV

        env: dict[str, str] = {}
        if self.cluster.path is not None:
            env["SRTSLURM_CONFIG"] = str(self.cluster.path.resolve())
        if self.stand_in is not None:
            env[STAND_IN_ENV] = self.stand_in.model
        if self.check_flags is not None:
            from srt_planner.flagcheck import FLAG_CHECK_ENV

            env[FLAG_CHECK_ENV] = "checked" if self.check_flags else "skipped"
        return env


def open_session(
    edge: Edge,
    *,
    output: str | None,
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    stand_in: bool = False,
    check_flags: bool | None = None,
) -> Session:
    from srt_cli.paths import output_base, runtime_python

    overrides = parse_overrides(sets, unsets)
    cluster = read_cluster(edge)
    base = output_base(edge, cluster.config, output)
    effective = cluster.effective()
    standing_in = None
    if stand_in:
        import msgspec

        from srt_planner.plan import StandIn
        from srt_planner.stand_in import STAND_IN_FOLDER

        standing_in = StandIn(model=f"{base.rstrip('/')}/{STAND_IN_FOLDER}")
        # The stand-ins are srt's own programs: they run on the hosts, never in the engines'
        # containers (the real frontends and services then come from the host too).
        effective = msgspec.structs.replace(effective, container_runtime="none")
    return Session(
        edge=edge,
        cluster=cluster,
        effective=effective,
        output_base=base,
        python=runtime_python(cluster.config),
        overrides=overrides,
        stand_in=standing_in,
        check_flags=check_flags,
    )
