"""The checks of ``truloop-assistant doctor``, one module per thing checked; each returns a :class:`Check`.

Light to import: every check loads the libraries it needs when it runs.
"""

from __future__ import annotations

from .outcome import Check

__all__ = ["Check"]
