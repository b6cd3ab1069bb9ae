"""A tiny model folder (tokenizer + config) made locally, so nothing is downloaded at run time.

The tokenizer is a word-level vocabulary `w0 … w<n-1>` split on whitespace: every token id decodes
to one visible word, so a server that streams one token per chunk really sends text deltas.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

__all__ = ["SPECIAL_TOKENS", "write_tiny_model"]

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")


def write_tiny_model(folder: Path, *, vocab_size: int = 2000) -> Path:
    """Write `tokenizer.json`, `tokenizer_config.json` and `config.json` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for i in range(vocab_size):
        vocab[f"w{i}"] = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    # WordPiece decoding joins words with single spaces and keeps them as they are.
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(vocab),
        "max_position_embeddings": 32768,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "bfloat16",
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": 32768,
        # Chat prompts are the plain concatenation of the messages: a chat request's prompt
        # tokens equal the completion request's.
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config, indent=2, sort_keys=True) + "\n"
    )
    return folder
