"""`gradfix` command line: check, apply (with --diff / -i), rule, lsp.

Exit codes (check and apply alike):
  0  nothing found (apply: nothing left to fix)
  1  findings remain (apply --diff: a diff was printed or findings remain)
  2  usage or configuration error; nothing was analysed
  3  a file could not be read, parsed or written (the others were still processed)
"""

from __future__ import annotations

import json
import os
import sys

import click

from gradfix import __version__
from gradfix.codemods import ALL_RULES, RULES_BY_ID
from gradfix.config import Config, ConfigError, check_selector, load_config
from gradfix.diffing import unified_diff
from gradfix.engine import Engine, Policy, policy_decider
from gradfix.runner import FileLint, RunReport, fix_paths, lint_paths

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_FILE_ERROR = 0, 1, 2, 3


def _codes(values: tuple[str, ...]) -> list[str]:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


def _build(paths, select, ignore) -> tuple[Engine, Config]:
    start = paths[0] if paths else os.getcwd()
    try:
        config = load_config(start, RULES_BY_ID)
        known = set(RULES_BY_ID)
        sel, ign = _codes(select), _codes(ignore)
        for code in sel + ign:
            check_selector(code, known, "--select/--ignore")
        if sel:
            config.select = sel
        config.ignore = list(config.ignore) + ign
        engine = Engine(ALL_RULES, config)
    except (ConfigError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    return engine, config


def _finding_json(path, f):
    return {"path": path, "line": f.span.line, "column": f.span.column, "end_line": f.span.end_line,
            "end_column": f.span.end_column, "rule": f.rule, "name": f.name, "message": f.message,
            "fixable": f.fixable}


def _error_json(e):
    return {"path": e.path, "line": e.line, "message": e.message}


def _print_errors(report: RunReport) -> None:
    for e in report.errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        click.echo(f"{where}: error: {e.message}", err=True)


def _exit(report: RunReport, findings: bool) -> int:
    if report.errors:
        return EXIT_FILE_ERROR
    return EXIT_FINDINGS if findings else EXIT_CLEAN


common_options = [
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option("--select", multiple=True, help="Rule ids or prefixes to enable (comma-separated)."),
    click.option("--ignore", multiple=True, help="Rule ids or prefixes to disable (comma-separated)."),
    click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True),
]


def with_common(fn):
    for opt in reversed(common_options):
        fn = opt(fn)
    return fn


def _verifier(enabled: bool, jobs: int, timeout: float):
    if not enabled:
        return None
    from gradfix.verify import Verifier

    return Verifier(jobs=jobs, timeout_s=timeout)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gradfix")
def main() -> None:
    """Find and fix PyTorch training hazards; every rewrite is verified by a gradient-equivalence test."""


@main.command()
@with_common
@click.option("--verify", is_flag=True, help="Also run the verifier on each fix and show its verdict (writes nothing).")
@click.option("--jobs", "-j", default=1, show_default=True, help="Verifier worker processes.")
@click.option("--timeout", default=20.0, show_default=True, help="Seconds per verification check.")
@click.option("--unsafe-fixes", is_flag=True, help="With --verify, count `changes-behaviour` fixes as applicable.")
def check(paths, select, ignore, fmt, verify, jobs, timeout, unsafe_fixes):
    """List hazards. Exit 0 clean, 1 findings, 2 usage error, 3 unreadable file."""
    paths = paths or (".",)
    engine, config = _build(paths, select, ignore)
    verdicts: dict[tuple[str, int, str], tuple[str, str]] = {}
    if verify:
        verifier = _verifier(True, jobs, timeout)
        try:
            report = fix_paths(engine, paths, config, lambda p: (lambda cs: _reject_all(cs)), verifier=verifier)
        finally:
            verifier.close()
        for res in report.fixes:
            for c in res.changes:
                verdicts[(res.path, c.finding.span.line, c.rule)] = (c.verdict.value, c.detail)
            # every change was rejected, so the findings are those of the file as it is
            report.lints.append(FileLint(res.path, res.findings))
    else:
        report = lint_paths(engine, paths, config)
    total = sum(len(l.findings) for l in report.lints)
    if fmt == "json":
        out = {"findings": [], "errors": [_error_json(e) for e in report.errors]}
        for lint in report.lints:
            for f in lint.findings:
                item = _finding_json(lint.path, f)
                if verify and f.fixable:
                    v = verdicts.get((lint.path, f.span.line, f.rule))
                    item["verdict"], item["detail"] = v if v else (None, "")
                    item["applies"] = bool(v) and _applies(v[0], unsafe_fixes)
                out["findings"].append(item)
        click.echo(json.dumps(out, indent=2))
    else:
        fixable = 0
        for lint in report.lints:
            for f in lint.findings:
                mark = " [*]" if f.fixable else ""
                fixable += f.fixable
                line = f"{lint.path}:{f.span.line}:{f.span.column}: {f.rule} {f.message}{mark}"
                if verify and f.fixable:
                    v = verdicts.get((lint.path, f.span.line, f.rule))
                    if v:
                        line += f"\n    verification: {v[0]}" + (f": {v[1]}" if v[1] else "")
                        if v[0] == "changes-behaviour" and not unsafe_fixes:
                            line += "\n    (applied only with --unsafe-fixes: no hazard was shown)"
                click.echo(line)
        _print_errors(report)
        if total:
            click.echo(f"Found {total} finding{'s' if total != 1 else ''} in {report.files} file"
                       f"{'s' if report.files != 1 else ''} ({fixable} with a fix: `gradfix apply --diff` to review).")
        elif not report.errors:
            click.echo(f"All checks passed ({report.files} file{'s' if report.files != 1 else ''}).")
    sys.exit(_exit(report, total > 0))


def _applies(verdict: str, unsafe_fixes: bool) -> bool:
    from gradfix.engine import APPLIED_VERDICTS

    return verdict in {v.value for v in APPLIED_VERDICTS} or (unsafe_fixes and verdict == "changes-behaviour")


def _reject_all(changes):
    from gradfix.engine import Decision

    for c in changes:
        c.reason = "check --verify writes nothing"
    return Decision([False] * len(changes))


@main.command()
@with_common
@click.option("--diff", is_flag=True, help="Write nothing; print the verified rewrites as a unified diff.")
@click.option("-i", "--interactive", is_flag=True, help="Accept or reject each change.")
@click.option("--no-verify", is_flag=True, help="Skip verification: apply safe fixes only (plus unsafe with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply `changes-behaviour` fixes (verified, but no hazard "
              "shown); with --no-verify, also apply fixes marked unsafe.")
@click.option("--allow-untestable", is_flag=True, help="Also apply changes the verifier could not test.")
@click.option("--jobs", "-j", default=1, show_default=True, help="Verifier worker processes.")
@click.option("--timeout", default=20.0, show_default=True, help="Seconds per verification check.")
def apply(paths, select, ignore, fmt, diff, interactive, no_verify, unsafe_fixes, allow_untestable, jobs, timeout):
    """Apply verified rewrites (or print them with --diff)."""
    paths = paths or (".",)
    engine, config = _build(paths, select, ignore)
    policy = Policy(unsafe_fixes=unsafe_fixes, allow_untestable=allow_untestable)
    if interactive:
        if diff:
            raise click.UsageError("-i and --diff cannot be combined")
        from gradfix.cli.interactive import run_interactive

        sys.exit(run_interactive(engine, config, paths, policy, verify=not no_verify, jobs=jobs, timeout=timeout))
    verifier = _verifier(not no_verify, jobs, timeout)
    try:
        report = fix_paths(engine, paths, config, lambda p: policy_decider(policy), verifier=verifier, write=not diff)
    finally:
        if verifier is not None:
            verifier.close()
    remaining = sum(len(r.findings) for r in report.fixes)
    changed = [r for r in report.fixes if r.fixed != r.original]
    if fmt == "json":
        out = {"changes": [], "findings": [], "errors": [_error_json(e) for e in report.errors]}
        for r in report.fixes:
            for c in r.changes:
                out["changes"].append({"path": r.path, "line": c.line, "rule": c.rule, "verdict": c.verdict.value,
                                       "detail": c.detail, "unit": c.unit, "applied": c.applied,
                                       "reason": c.reason if not c.applied else ""})
            for f in r.findings:
                out["findings"].append(_finding_json(r.path, f))
        if diff:
            out["diff"] = "".join(unified_diff(r.original, r.fixed, r.path) for r in changed)
        click.echo(json.dumps(out, indent=2))
    else:
        if diff:
            for r in changed:
                click.echo(unified_diff(r.original, r.fixed, r.path), nl=False)
        _summary(report, diff, err=diff)
        _print_errors(report)
    findings_left = remaining > 0 or (diff and bool(changed))
    sys.exit(_exit(report, findings_left))


def _summary(report: RunReport, diff: bool, err: bool) -> None:
    echo = lambda s="": click.echo(s, err=err)  # noqa: E731
    applied = sorted(((r.path, c) for r in report.fixes for c in r.changes if c.applied), key=lambda t: (t[0], t[1].line))
    skipped = sorted(((r.path, c) for r in report.fixes for c in r.changes if not c.applied), key=lambda t: (t[0], t[1].line))
    verb = "Would apply" if diff else "Applied"
    for path, c in applied:
        echo(f"{path}:{c.line}: {c.rule} {c.fix.description} [{c.verdict.value}]"
             + (f" — {c.detail}" if c.detail else ""))
    for path, c in skipped:
        echo(f"{path}:{c.line}: {c.rule} not applied [{c.verdict.value}]: {c.reason}")
    remaining = sum(len(r.findings) for r in report.fixes)
    files = len({p for p, _ in applied})
    echo(f"{verb} {len(applied)} change{'s' if len(applied) != 1 else ''} in {files} file{'s' if files != 1 else ''}"
         f"; {len(skipped)} not applied; {remaining} finding{' remains' if remaining == 1 else 's remain'}.")


@main.command()
@click.argument("rule_id", required=False)
@click.option("--all", "show_all", is_flag=True, help="Print every rule's documentation.")
def rule(rule_id, show_all):
    """Explain a rule (Markdown), e.g. `gradfix rule GF101`; without an id, list the rules."""
    if show_all:
        click.echo("\n\n".join(r.documentation() for r in ALL_RULES))
        return
    if rule_id is None:
        for r in ALL_RULES:
            click.echo(f"{r.id}  {r.name:<28} {r.summary}")
        return
    r = RULES_BY_ID.get(rule_id.upper())
    if r is None:
        raise click.UsageError(f"unknown rule {rule_id!r}")
    click.echo(r.documentation())


@main.command()
def lsp():
    """Start the language server on stdio."""
    from gradfix.cli.lsp import serve

    serve()
