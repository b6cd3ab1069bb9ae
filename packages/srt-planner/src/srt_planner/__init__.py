"""srt_planner."""
