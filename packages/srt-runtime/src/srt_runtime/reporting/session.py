"""One job's reporting, wired into the supervisor with three calls
(docs/telemetry-and-bench.md#end-of-job-order ordering).

::

    session = ReportingSession.open(plan.reporting, job_id=..., job_dir=..., environ=os.environ,
                                    local=FileStatusSink(...), wall=clock.wall, log=logger.log)
    # run_job(plan, launcher, session.sink, ...): every lifecycle event, local + remote; after
    # cleanup, rollup and the lockfile, and BEFORE its final "cleanup" event:
    outcome = session.finish(exit_code=code)   # AI (its file is uploaded), S3, "Artifacts
                                               # uploaded", stop streaming, the job report for
                                               # the final event (with the analysis)
    # ... then the final event (it carries logs_url), then:
    session.close()                            # bounded wait for the queued status events

Time added to a job, at most: ``s3_timeout`` + ``ai_timeout`` (only after a failure) +
``stream_stop`` + ``close`` budget; each step returns on its own deadline whatever the servers do.
The job's exit code is never changed here; a failed upload is reported as
``outcome.upload.exit_code == 11``.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import msgspec

from srt_runtime.reporting._common import LogFn, null_log
from srt_runtime.reporting.ai_analysis import ANALYSIS_TIMEOUT, AnalysisResult, run_ai_analysis
from srt_runtime.reporting.job_report import JobReport
from srt_runtime.reporting.job_report_read import read_job_report
from srt_runtime.reporting.s3 import UPLOAD_TIMEOUT, UploadResult, stage_job_files, upload_results
from srt_runtime.reporting.status import DeliverySummary, StatusReporter
from srt_runtime.reporting.status_sink import RemoteStatusSink
from srt_runtime.reporting.stream import STOP_BUDGET, LogStreamer
from srt_runtime.status import StatusSink
from srt_schema.recipe import ReportingConfig
from srt_schema.secrets import fill_secret_fields

__all__ = ["FinishOutcome", "ReportingSession", "resolve_secret_markers"]


def resolve_secret_markers(config: ReportingConfig | None) -> ReportingConfig | None:
    """``config`` (a plan's ``reporting``) with each secret field that ``plan.json`` holds as a
    marker unset, so its reader takes the variable the marker names (srt_schema.secrets)."""
    if config is None:
        return None
    doc = fill_secret_fields({"reporting": msgspec.to_builtins(config)}, None)
    return msgspec.convert(doc["reporting"], ReportingConfig)


class FinishOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What :meth:`ReportingSession.finish` did (None: the step is not configured / not needed)."""

    upload: UploadResult | None = None
    analysis: AnalysisResult | None = None
    #: Whether the final log flush completed (None: streaming is off).
    streamed: bool | None = None
    #: What the final status event carries (None: no status endpoint, or nothing to report).
    report: JobReport | None = None


class ReportingSession:
    """Status reporter + log streamer + post-run upload and analysis for one job."""

    def __init__(
        self,
        config: ReportingConfig | None,
        *,
        job_id: str,
        job_dir: Path,
        environ: Mapping[str, str],
        reporter: StatusReporter,
        sink: RemoteStatusSink,
        streamer: LogStreamer | None,
        log: LogFn,
    ) -> None:
        self.config = config
        self.job_id = job_id
        self.job_dir = job_dir
        self.log_dir = job_dir / "logs"
        self._environ = dict(environ)
        self.reporter = reporter
        self.sink: RemoteStatusSink = sink
        self.streamer = streamer
        self._log = log

    @classmethod
    def open(
        cls,
        config: ReportingConfig | None,
        *,
        job_id: str,
        job_dir: Path,
        environ: Mapping[str, str],
        local: StatusSink,
        wall: Callable[[], float],
        cluster: str | None = None,
        started_metadata: Mapping[str, Any] | None = None,
        log: LogFn = null_log,
        status_timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> ReportingSession:
        """Create the reporter and sink, and start streaming when configured; ``config`` is the
        plan's ``reporting`` (secret markers are resolved from ``environ``)."""
        config = resolve_secret_markers(config)
        status = config.status if config is not None else None
        reporter = StatusReporter.from_config(
            status,
            job_id,
            environ,
            cluster=cluster,
            log=log,
            timeout=status_timeout,
            transport=transport,
        )
        sink = RemoteStatusSink(local, reporter, wall=wall, started_metadata=started_metadata)
        streamer = LogStreamer.from_config(
            status, job_id, job_dir / "logs", environ, cluster=cluster, log=log, transport=transport
        )
        if streamer is not None:
            streamer.start()
        return cls(
            config,
            job_id=job_id,
            job_dir=job_dir,
            environ=environ,
            reporter=reporter,
            sink=sink,
            streamer=streamer,
            log=log,
        )

    def finish(
        self,
        *,
        exit_code: int,
        now: dt.datetime | None = None,
        s3_timeout: float = UPLOAD_TIMEOUT,
        s3_connect_timeout: float = 10.0,
        ai_timeout: float = ANALYSIS_TIMEOUT,
        ai_base_url: str | None = None,
        stream_stop: float = STOP_BUDGET,
        zstd: str | None = "auto",
    ) -> FinishOutcome:
        """Post-run steps in the documented order; call after the lockfile, before the final
        status event. Never raises for server trouble and never changes ``exit_code``."""
        upload: UploadResult | None = None
        analysis: AnalysisResult | None = None
        # the analysis first: its file is in the log folder the upload sends, and its text in
        # the report the collectors show
        ai = self.config.ai_analysis if self.config is not None else None
        if ai is not None and ai.enabled and exit_code != 0:
            analysis = run_ai_analysis(
                ai,
                exit_code=exit_code,
                log_dir=self.log_dir,
                environ=self._environ,
                log=self._log,
                base_url=ai_base_url,
                timeout=ai_timeout,
            )
        s3 = self.config.s3 if self.config is not None else None
        if s3 is not None:
            stage_job_files(self.job_dir, self.log_dir, self.job_id)
            upload = upload_results(
                s3,
                log_dir=self.log_dir,
                job_id=self.job_id,
                environ=self._environ,
                now=now or dt.datetime.now(dt.UTC),
                log=self._log,
                timeout=s3_timeout,
                connect_timeout=s3_connect_timeout,
                zstd=shutil.which("zstd") if zstd == "auto" else zstd,
            )
            if upload.ok:
                self.sink.report_artifacts(upload.url)
        streamed = self.streamer.stop(stream_stop) if self.streamer is not None else None
        report = None
        if self.reporter.enabled:
            report = read_job_report(
                self.job_dir,
                exit_code=exit_code,
                s3=s3,
                upload=upload,
                log=self._log,
                analysis=analysis,
            )
            self.sink.report = report
        return FinishOutcome(upload=upload, analysis=analysis, streamed=streamed, report=report)

    def close(self, timeout: float = 5.0) -> DeliverySummary:
        """After the final event: wait at most ``timeout`` s for queued status events."""
        return self.reporter.close(timeout)
