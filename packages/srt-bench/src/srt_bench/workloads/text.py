"""Prompt text made of pieces that keep their token counts when joined.

Shared prefixes, trace blocks and conversation histories are built by joining texts, so a joined
prompt must tokenize to the sum of its pieces' tokens and to the same ids (otherwise two prompts
that "share" a prefix would not share its tokens). Pieces are drawn from the tokenizer's
round-trip vocabulary (space-led words where the vocabulary has them) and joined with the
separator the tokenizer's decoder puts between two tokens (`""` for byte-level vocabularies,
`" "` for word-level ones, where whitespace is no token).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from srt_bench.errors import BenchDatasetError
from srt_bench.prompts import round_trip_vocab
from srt_bench.tokenizer import BenchTokenizer

__all__ = ["PieceMaker"]


class PieceMaker:
    """Draws texts of exact token lengths from seeded generators and joins them."""

    def __init__(self, tokenizer: BenchTokenizer) -> None:
        self.tokenizer = tokenizer
        self.vocab = round_trip_vocab(tokenizer)
        if len(self.vocab) < 2:
            raise BenchDatasetError(
                "the tokenizer has fewer than 2 regular tokens to build workload prompts from"
            )
        self.sep = self._separator()

    def _separator(self) -> str:
        a, b = self.vocab[0], self.vocab[1]
        da, db = self.tokenizer.decode([a]), self.tokenizer.decode([b])
        both = self.tokenizer.decode([a, b])
        for sep in ("", " "):
            if both == da + sep + db:
                return sep
        raise BenchDatasetError(
            f"this tokenizer decodes two tokens as {both!r}, neither {da + db!r} nor "
            f"{da + ' ' + db!r}: workload prompts cannot be joined from pieces; use "
            "dataset_name: custom"
        )

    def ids(self, rng: random.Random, n: int) -> list[int]:
        return rng.choices(self.vocab, k=n)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids))

    def draw(self, rng: random.Random, n: int) -> str:
        """A text of `n` tokens."""
        return self.decode(self.ids(rng, n))

    def join(self, parts: Sequence[str]) -> str:
        return self.sep.join(p for p in parts if p)

    def pad(self, text: str) -> str:
        """`text` with the separator on both sides: a message that a chat template concatenates
        with its neighbours without a delimiter still starts and ends on a token boundary."""
        return f"{self.sep}{text}{self.sep}" if self.sep else text

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text (no special tokens; one parallel batch)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]
