"""`gradfix probe`: run the training and show where learning stops.

`with gradfix.probe(steps=5) as p: ...; print(p.report())` in code, `gradfix probe train.py` on the command line.
This package module imports no torch: the session does, when a probe starts.
"""

from __future__ import annotations

import sys
import types


def probe(steps: int | None = None):
    """A probe session for a `with` block (see gradfix.probe.session.Probe)."""
    from gradfix.probe.session import Probe

    return Probe(steps)


class _CallableModule(types.ModuleType):
    """`gradfix.probe` is both this subpackage and the function users call: calling the module calls probe()."""

    def __call__(self, steps: int | None = None):
        return probe(steps)


sys.modules[__name__].__class__ = _CallableModule
