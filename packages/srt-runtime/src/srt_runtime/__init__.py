"""srt_runtime."""
