"""srt_schema."""
