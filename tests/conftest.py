"""Fixtures shared across test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def shared_verifier():
    """One Verifier (two workers) for the test modules whose checks need no verifier of their own
    (a short timeout, limits, another interpreter, another working directory): each worker imports
    torch and warms up once for the session instead of once per module. Each check runs in a
    forked child of a worker, so one module's checks leave nothing behind for the next."""
    from gradfix.verify import Verifier

    old = os.getcwd()
    os.chdir(ROOT)           # the workers' working directory, whichever test asks first
    try:
        v = Verifier(jobs=2, timeout_s=60.0)
        v.start(wait=False)
    finally:
        os.chdir(old)
    with v:
        yield v
