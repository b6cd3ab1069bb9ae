"""srt_bench."""
