"""The legacy systems Tower operates on, each behind the `LegacyAdapter` interface."""

from tower.adapters.base import AdapterError, LegacyAdapter


def adapter_for(org) -> LegacyAdapter:
    """The adapter of an organization's legacy system (every organization runs the mock in the pilot)."""
    from tower.adapters.mock import MockErpAdapter

    return MockErpAdapter(org)


__all__ = ["AdapterError", "LegacyAdapter", "adapter_for"]
