"""`gradfix apply -i`: review each change like `git add -p`.

The engine proposes and verifies; this module only shows each change and asks.
`q` keeps what was accepted (unlike Fixit, which drops it); Ctrl-C writes nothing
more, leaves files already written as they are, and still prints the summary.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict

import click

from gradfix.diffing import unified_diff
from gradfix.engine import APPLIED_VERDICTS, Change, Decision, Policy
from gradfix.model import Verdict
from gradfix.runner import fix_paths

PROMPT = "Apply this change [y,n,a,d,q,?]? "
HELP = """y - apply this change
n - do not apply this change
a - apply this change and all later changes in this file
d - do not apply this change or any later change in this file
q - quit; changes already accepted are written
? - print help"""


class _Session:
    def __init__(self, policy: Policy, color: bool):
        self.policy = policy
        self.color = color
        self.counts = defaultdict(lambda: {"applied": 0, "skipped": 0, "refused": 0})
        self.file_mode: dict[str, str] = {}   # path -> "all" | "none"
        self.written: list[str] = []

    def style(self, text, **kw):
        return click.style(text, **kw) if self.color else text

    def echo(self, text=""):
        click.echo(text, color=self.color)

    def show(self, change: Change) -> None:
        f = change.finding
        self.echo(self.style(f"{change.path}:{change.line}:{f.span.column}: {f.rule} ({f.name})", bold=True))
        self.echo(f"  {f.message}")
        for line in unified_diff(change.before, change.after, change.path).splitlines():
            if line.startswith(("diff --git", "--- ", "+++ ")):
                continue
            if line.startswith("@@"):
                line = self.style(line, fg="cyan")
            elif line.startswith("+"):
                line = self.style(line, fg="green")
            elif line.startswith("-"):
                line = self.style(line, fg="red")
            self.echo(line)
        verdict = change.verdict.value
        colour = "green" if change.verdict in APPLIED_VERDICTS else "yellow" if change.verdict in (
            Verdict.UNTESTABLE, Verdict.NOT_VERIFIED, Verdict.CHANGES_BEHAVIOUR) else "red"
        self.echo("  verification: " + self.style(verdict, fg=colour) + (f" — {change.detail}" if change.detail else ""))

    def acceptable(self, change: Change) -> tuple[bool, str]:
        v = change.verdict
        if v is Verdict.FAILED:
            return False, "verification failed: this change cannot be applied"
        if v is Verdict.UNTESTABLE and not self.policy.allow_untestable:
            return False, "untestable: pass --allow-untestable to be able to accept it"
        if v is Verdict.NOT_VERIFIED:
            return True, ""
        return True, ""

    def decide(self, changes: list[Change]) -> Decision:
        accept: list[bool] = []
        for i, change in enumerate(changes):
            path = change.path
            ok, why = self.acceptable(change)
            mode = self.file_mode.get(path)
            if not ok:
                self.show(change)
                self.echo(self.style(f"  {why}", fg="red"))
                self.echo()
                change.reason = why
                self.counts[path]["refused"] += 1
                accept.append(False)
                continue
            if mode is not None:
                take = mode == "all"
                self._count(change, take)
                accept.append(take)
                continue
            self.show(change)
            if change.verdict is Verdict.UNTESTABLE:
                self.echo(self.style("  warning: this change could not be verified", fg="yellow", bold=True))
            elif change.verdict is Verdict.CHANGES_BEHAVIOUR:
                self.echo(self.style("  warning: this change alters results and no hazard was shown in the original",
                                     fg="yellow", bold=True))
            while True:
                answer = self.ask()
                if answer in ("y", "n", "a", "d", "q"):
                    break
                if answer == "?":
                    self.echo(HELP)
            self.echo()
            if answer == "q":
                for rest in changes[i:]:
                    rest.reason = "not reviewed (quit)"
                accept.extend([False] * (len(changes) - i))
                return Decision(accept, stop=True)
            if answer in ("a", "d"):
                self.file_mode[path] = "all" if answer == "a" else "none"
            take = answer in ("y", "a")
            self._count(change, take)
            accept.append(take)
        return Decision(accept)

    def _count(self, change: Change, take: bool) -> None:
        if take:
            self.counts[change.path]["applied"] += 1
        else:
            change.reason = change.reason or "skipped"
            self.counts[change.path]["skipped"] += 1

    def ask(self) -> str:
        click.echo(self.style(PROMPT, fg="blue", bold=True), nl=False, color=self.color)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.strip().lower()


def run_interactive(engine, config, paths, policy: Policy, verify: bool, jobs: int, timeout: float) -> int:
    if not sys.stdin.isatty():
        click.echo("error: -i needs a terminal on standard input; use `gradfix apply --diff` to review changes "
                   "as a patch instead", err=True)
        return 2
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    session = _Session(policy, color)
    verifier = None
    if verify:
        from gradfix.verify import Verifier

        verifier = Verifier(jobs=jobs, timeout_s=timeout)

    def written(result):
        if result.fixed != result.original:
            session.written.append(result.path)

    interrupted = False
    report = None
    try:
        report = fix_paths(engine, paths, config, lambda p: session.decide, verifier=verifier, write=True,
                           after_file=written)
    except (KeyboardInterrupt, EOFError):
        interrupted = True
        session.echo()
        session.echo("interrupted: the file under review was not written")
    finally:
        if verifier is not None:
            verifier.close()
    session.echo(session.style("Summary", bold=True))
    for path, c in session.counts.items():
        mark = "written" if path in session.written else "unchanged"
        session.echo(f"  {path}: {c['applied']} applied, {c['skipped']} skipped, "
                     f"{c['refused']} refused by verification ({mark})")
    if not session.counts:
        session.echo("  no changes to review")
    if report is not None:
        for e in report.errors:
            click.echo(f"{e.path}:{e.line or ''}: error: {e.message}", err=True)
        if report.errors:
            return 3
        if any(r.findings for r in report.fixes):
            return 1
    return 1 if interrupted else 0
