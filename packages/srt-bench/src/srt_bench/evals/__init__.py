"""Our own accuracy evaluators (gsm8k, mmlu, gpqa, longbenchv2) reading local JSON Lines files."""
