"""The assistant's toolsets, grouped the way the agents use them."""

from .client_tools import event_client_toolset, interaction_toolset, permission_toolset
from .datetime_tools import datetime_toolset

all_toolsets = [datetime_toolset, event_client_toolset, interaction_toolset, permission_toolset]

__all__ = [
    "all_toolsets",
    "datetime_toolset",
    "event_client_toolset",
    "interaction_toolset",
    "permission_toolset",
]
