"""Results that leave the cluster: status API, live log streaming, S3 upload, AI analysis,
identity verification and worker fingerprints (the post_eval step is planned by
``srt_planner.post_eval``).

Every entry point that touches the network is bounded in time and returns a result instead of
raising, so reporting can never change a job's exit code or delay it beyond the documented
bounds. Nothing here prints; messages go to a ``(level, message)`` callable such as
``logging.getLogger("srt_runtime").log``. Secrets (bearer token, S3 keys, API keys) are read from
the environment or the config at the call, kept in memory and never written to any file.
"""
