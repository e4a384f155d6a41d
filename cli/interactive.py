"""`gradfix apply -i`: review each change like `git add -p`.

The engine proposes and verifies; this module only shows each change and asks.
`q` keeps what was accepted (unlike Fixit, which drops it); Ctrl-C writes nothing
more, leaves files already written as they are, and still prints the summary.
The summary counts the engine's results, not the answers: a change offered again (after an
overlapping one was applied, or verified again after a crash fix) is counted once, as what
happened to it.
"""

from __future__ import annotations

import os
import sys
import click

from gradfix.notebook import file_diff
from gradfix.engine import APPLIED_VERDICTS, Change, Decision, Policy
from gradfix.model import Verdict
from gradfix.runner import fix_paths

QUIT_REASON = "not reviewed (quit)"
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
        self.file_mode: dict[str, str] = {}   # path -> "all" | "none"
        self.written: list[str] = []
        self.results: list = []                # FixResult per file reviewed, in order
        self.refused: dict[tuple, str] = {}    # (path, rule, line) -> why verification refused it
        self.current: str | None = None        # the file under review

    def style(self, text, **kw):
        return click.style(text, **kw) if self.color else text

    def echo(self, text=""):
        click.echo(text, color=self.color)

    def show(self, change: Change) -> None:
        f = change.finding
        self.echo(self.style(f"{change.path}:{f.position(change.line)}: {f.rule} ({f.name})", bold=True))
        self.echo(f"  {f.message}")
        # a notebook's change comes in cell coordinates, with the notebook file's text
        for line in file_diff(change.before, change.after, change.path).splitlines():
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
            path = self.current = change.path
            key = (path, change.rule, change.line)
            ok, why = self.acceptable(change)
            mode = self.file_mode.get(path)
            if not ok:
                change.reason = why
                accept.append(False)
                if key not in self.refused:  # said once; not shown (or counted) again
                    self.refused[key] = why
                    self.show(change)
                    self.echo(self.style(f"  {why}", fg="red"))
                    self.echo()
                continue
            if key in self.refused:
                # verified again once other changes in this file were taken: say why it is offered now
                del self.refused[key]
                self.echo(self.style("  verified again after the changes accepted above:", fg="yellow"))
            if mode is not None:
                take = mode == "all"
                if not take:
                    change.reason = "skipped"
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
                    rest.reason = QUIT_REASON
                accept.extend([False] * (len(changes) - i))
                return Decision(accept, stop=True)
            if answer in ("a", "d"):
                self.file_mode[path] = "all" if answer == "a" else "none"
            take = answer in ("y", "a")
            if not take:
                change.reason = "skipped"
            accept.append(take)
        return Decision(accept)

    def counts(self, result) -> dict[str, int]:
        """What happened to each change of one file, each counted once."""
        c = {"applied": 0, "skipped": 0, "refused": 0, "unreviewed": 0}
        for change in result.changes:
            if change.applied:
                c["applied"] += 1
            elif change.reason == QUIT_REASON:
                c["unreviewed"] += 1
            elif (change.path, change.rule, change.line) in self.refused:
                c["refused"] += 1
            else:
                c["skipped"] += 1
        return c

    def ask(self) -> str:
        click.echo(self.style(PROMPT, fg="blue", bold=True), nl=False, color=self.color)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.strip().lower()


def run_interactive(engine, config, paths, policy: Policy, verify: bool, jobs: int, timeout: float,
                    make_verifier=None) -> int:
    if not sys.stdin.isatty():
        click.echo("error: -i needs a terminal on standard input; use `gradfix apply --diff` to review changes "
                   "as a patch instead", err=True)
        return 2
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    session = _Session(policy, color)
    verifier = None
    if verify and make_verifier is not None:
        verifier = make_verifier()  # the project's interpreter, roots and limits (cli/main.py)
    elif verify:
        from gradfix.verify import Verifier

        verifier = Verifier(jobs=jobs, timeout_s=timeout)

    def written(result):
        session.results.append(result)
        if result.fixed != result.original:
            session.written.append(result.path)

    interrupted = 0
    report = None
    try:
        report = fix_paths(engine, paths, config, lambda p: session.decide, verifier=verifier, write=True,
                           after_file=written)
    except (KeyboardInterrupt, EOFError) as exc:
        interrupted = 130 if isinstance(exc, KeyboardInterrupt) else 1
        session.echo()
        under = f" ({session.current})" if session.current and session.current not in session.written else ""
        session.echo(f"interrupted: the file under review{under} was not written")
    finally:
        if verifier is not None:
            verifier.close()
    session.echo(session.style("Summary", bold=True))
    shown = 0
    for result in session.results:
        if not result.changes:
            continue
        shown += 1
        c = session.counts(result)
        mark = "written" if result.path in session.written else "unchanged"
        session.echo(f"  {result.path}: {c['applied']} applied, {c['skipped']} skipped, "
                     f"{c['refused']} refused by verification"
                     + (f", {c['unreviewed']} not reviewed" if c["unreviewed"] else "") + f" ({mark})")
    if not shown:
        session.echo("  no changes to review")
    if report is not None:
        for e in report.errors:
            click.echo(f"{e.path}:{e.line or ''}: error: {e.message}", err=True)
        if report.errors:
            return 3
        if any(r.findings for r in report.fixes):
            return 1
    return interrupted or 0
