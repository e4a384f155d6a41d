"""A progress bar on stderr for long scans and verification, shown only when stderr is a terminal.

The runner calls `start(total)` once the files are known and `advance(path)` before each one; the
bar is transient (erased when done) so it never mixes with the report on stdout.
"""

from __future__ import annotations

import os
import sys


def wanted(stream=None) -> bool:
    stream = stream or sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


class ScanProgress:
    def __init__(self, verb: str, console=None):
        self.verb = verb
        self._console = console
        self._progress = None
        self._task = None
        self._done = 0

    def start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = self._console or Console(stderr=True)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TextColumn("{task.fields[path]}"),
                                  console=console, transient=True)
        self._done = 0
        self._task = self._progress.add_task(self.verb, total=total, path="")
        self._progress.start()

    def advance(self, path: str) -> None:
        if self._progress is None:
            return
        if self._done:
            self._progress.advance(self._task)
        self._done += 1
        self._progress.update(self._task, path=path)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self._done)
            self._progress.stop()
            self._progress = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def progress_for(verb: str, enabled: bool) -> ScanProgress | None:
    return ScanProgress(verb) if enabled and wanted() else None
