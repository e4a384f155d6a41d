"""gradfix: find PyTorch training hazards and rewrite them, proving each rewrite."""

__version__ = "0.1.0"
