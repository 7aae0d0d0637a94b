"""uab: uncertainty-aware budget allocation for adaptive test-time reasoning."""

__version__ = "0.1.0"
