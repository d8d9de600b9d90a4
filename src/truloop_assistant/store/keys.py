"""Every Redis key the server writes, with its lifetime. Nothing else builds key names.

Gathered here from the modules that name them: a conversation's keys (``conversation_keys.py``, all
with one hash tag so that scripts touching several of them work on Redis Cluster), a person's
(``user_keys.py``), a phone number's text messages (``sms_keys.py``, with their lifetimes), the
app-wide ones (``app_keys.py``), and how long each lives and how large it may grow
(``key_limits.py``). Callers use them as ``keys.<name>``.
"""

from __future__ import annotations

from . import key_prefix
from .app_keys import *  # noqa: F403
from .conversation_keys import *  # noqa: F403
from .key_limits import *  # noqa: F403
from .sms_keys import *  # noqa: F403
from .user_keys import *  # noqa: F403

DEV_KEY_PREFIX = key_prefix.DEV_KEY_PREFIX
PREFIX = key_prefix.prefix()
"""The start of every key (``TRULOOP_KEY_PREFIX``), so several deployments can share one Redis."""


def use_prefix(prefix: str) -> None:
    """Name every key of this process under ``prefix`` (from the settings, before Redis is used)."""
    global PREFIX
    key_prefix.set_prefix(prefix)
    PREFIX = prefix
