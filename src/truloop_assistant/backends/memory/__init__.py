"""Long-term memories of each user: facts and preferences the user asked the assistant to remember.

:class:`RedisMemoryStore` (:mod:`.redis`) is the default and needs no account;
:class:`SupermemoryStore` (:mod:`.supermemory`) is the production adapter, whose module documents
the requests it makes.
"""

from __future__ import annotations

from .port import Memory, MemoryBackendError, MemoryStore
from .redis import RedisMemoryStore, new_memory_id
from .supermemory import SupermemoryStore

__all__ = [
    "Memory",
    "MemoryBackendError",
    "MemoryStore",
    "RedisMemoryStore",
    "SupermemoryStore",
    "new_memory_id",
]
