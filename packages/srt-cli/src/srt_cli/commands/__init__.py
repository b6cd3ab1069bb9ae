"""One module per srtctl command; each exposes ``command``."""
