"""srt_telemetry."""
