"""Verification of rewrites by running the original and the rewritten code (see verifier.py).

Importing this package never imports torch; torch lives in the worker processes.
"""

from .api import VerifyRequest, VerifyResult
from .verifier import Verifier

__all__ = ["Verifier", "VerifyRequest", "VerifyResult"]
