"""Text search shared by the backends that rank text in process: one tokenizer, one BM25 ranking."""

from __future__ import annotations

from .bm25 import Bm25Index
from .tokenize import TOKENIZER_VERSION, tokenize

__all__ = ["TOKENIZER_VERSION", "Bm25Index", "tokenize"]
