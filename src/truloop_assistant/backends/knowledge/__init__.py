"""The knowledge base: BM25 search over a folder of Markdown documents (e.g. a Notion export).

Documents are parsed with markdown-it (:mod:`.markdown`), cut into passages of a few hundred
characters under their headings (:mod:`.documents`), ranked with ``bm25s`` over the shared tokenizer
and collapsed to one hit per document (:mod:`.search`). ``kb index`` saves the passages and their
tokens (:mod:`.index_file`) so the server can start without re-reading the folder (:mod:`.loading`).
"""

from __future__ import annotations

from .documents import title_from_file_name
from .index_file import INDEX_FILE_NAME
from .loading import SAMPLE_DIR, load_knowledge_base
from .port import KnowledgeBase, KnowledgeBaseError, KnowledgeHit
from .search import SNIPPET_MAX_CHARS, Bm25KnowledgeBase

__all__ = [
    "INDEX_FILE_NAME",
    "SAMPLE_DIR",
    "SNIPPET_MAX_CHARS",
    "Bm25KnowledgeBase",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "KnowledgeHit",
    "load_knowledge_base",
    "title_from_file_name",
]
