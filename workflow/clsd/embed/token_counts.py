"""How many input tokens a text costs an embedding endpoint, counted before anything is sent.

With the model's own tokenizer (`endpoint.tokenizer`: a Hugging Face `tokenizer.json`, or a folder holding one) a
text's tokens are counted exactly as a server running that tokenizer counts them, special tokens included (a BERT
model's [CLS] and [SEP]: what llama.cpp's server and Text Embeddings Inference report as `prompt_tokens`). Without
it, a characters-per-token rule: the ratio the endpoint itself reported for this model's earlier requests in the
vector store, else DEFAULT_CHARS_PER_TOKEN (OpenAI's rule of thumb for English; German and French run somewhat
fewer characters per token, other scripts far fewer: a first small run calibrates it).
"""

from __future__ import annotations

import math
from pathlib import Path

#: Characters per token without a tokenizer or a history.
DEFAULT_CHARS_PER_TOKEN = 4.0


def tokenizer_file(configured: str | Path) -> Path:
    """The `tokenizer.json` a configured tokenizer names: the file, or the one in the folder given."""
    path = Path(configured).expanduser()
    return path / "tokenizer.json" if path.is_dir() else path


class TokenCounter:
    """Counts (and cuts) texts in tokens: by `tokenizer` (a tokenizer.json) when given, else at `chars_per_token`
    (from the store's history, `requests` of them; None: the default)."""

    def __init__(self, tokenizer: str | Path | None = None, chars_per_token: float | None = None, requests: int = 0) -> None:
        self.tokenizer = None
        if tokenizer is not None:
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(str(tokenizer_file(tokenizer)))
            self.tokenizer.no_truncation()
            self.tokenizer.no_padding()
        self.chars_per_token = chars_per_token or DEFAULT_CHARS_PER_TOKEN
        self.rule = ("the model's tokenizer" if self.tokenizer is not None else
                     f"{self.chars_per_token:.2f} characters per token (the endpoint's count on {requests} earlier requests "
                     "of this model in the vector store)" if chars_per_token else
                     f"{DEFAULT_CHARS_PER_TOKEN:g} characters per token (default: no tokenizer configured, no earlier "
                     "requests of this model in the vector store)")

    def count(self, text: str) -> int:
        """The tokens of `text` as sent."""
        if self.tokenizer is not None:
            return len(self.tokenizer.encode(text).ids)
        return max(1, math.ceil(len(text) / self.chars_per_token))

    def cut(self, text: str, limit: int) -> str:
        """The longest start of `text` of at most `limit` tokens, cut after a whole token (with the tokenizer; at
        `limit` × characters per token without one)."""
        if self.count(text) <= limit:
            return text
        if self.tokenizer is None:
            return text[: int(limit * self.chars_per_token)]
        encoding = self.tokenizer.encode(text)
        special = sum(encoding.special_tokens_mask)
        ends = [end for (_, end), mask in zip(encoding.offsets, encoding.special_tokens_mask) if not mask]
        keep = max(0, limit - special)
        return text[: ends[keep - 1]] if keep else ""
