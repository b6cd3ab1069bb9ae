"""srt_cli."""
