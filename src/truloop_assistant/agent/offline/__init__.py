"""The built-in rule-based model for keyless development (``TRULOOP_MODEL=offline``)."""

from .model import build_offline_model

__all__ = ["build_offline_model"]
