"""Which line writes a parameter outside the optimizer: line tracing in the script's frames for one step."""

from __future__ import annotations

import sys

from gradfix.probe.frames import is_user_file
from gradfix.probe.numeric import norms, quiet


class LineWatch:
    """Line tracing in the script's frames, from a root module's forward until the next step, to find which line
    writes the watched parameters (they were written there in the previous step). Skipped when a tracer such as
    coverage or a debugger is already installed."""

    def __init__(self, params):
        self.ids = {id(p) for p in params}
        self.params = params
        with quiet():
            self.state = [(p.untyped_storage().data_ptr(), n) for p, n in zip(params, norms(params))]
        self.found: tuple[str, int] | None = None
        self.prev: tuple[str, int] | None = None
        self.active = sys.gettrace() is None
        self.frames = []
        if self.active:
            sys.settrace(self._global)
            f = sys._getframe(1)
            while f is not None:
                if is_user_file(f.f_code.co_filename):
                    f.f_trace, f.f_trace_lines = self._local, True
                    self.frames.append(f)
                f = f.f_back

    def _changed(self) -> bool:
        with quiet():
            now = [(p.untyped_storage().data_ptr(), n) for p, n in zip(self.params, norms(self.params))]
        return now != self.state

    def _global(self, frame, event, arg):
        return self._local if is_user_file(frame.f_code.co_filename) else None

    def _local(self, frame, event, arg):
        if self.found is not None or not self.active:
            return None
        if event in ("line", "return"):
            if self.prev is not None and self._changed():
                self.found = self.prev
                return None
            if event == "line":
                self.prev = (frame.f_code.co_filename, frame.f_lineno)
        return self._local

    def close(self) -> None:
        if self.active:
            sys.settrace(None)
            for f in self.frames:
                f.f_trace = None
            self.active = False
