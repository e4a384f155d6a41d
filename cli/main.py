"""`gradfix` command line: check, apply (with --diff / -i), rule, lsp.

Exit codes (check and apply alike):
  0  nothing found (apply: nothing left to fix)
  1  findings remain (apply --diff: a diff was printed or findings remain)
  2  usage or configuration error; nothing was analysed
  3  a file could not be read, parsed or written (the others were still processed)
  130 interrupted (Ctrl-C); `apply` says which files it had written
"""

from __future__ import annotations

import os
import sys

import click

from gradfix import __version__
from gradfix.config import Config, ConfigError, check_selector, find_pyproject, load_config
from gradfix.report import EMBEDS_ERRORS, FORMATS, from_fixes, from_lints, render
from gradfix.report.progress import progress_for
from gradfix.runner import STDIN, FileLint, RunReport, fix_paths, lint_paths
from gradfix.model import line_label

# the rules, the engine and libcst are imported where a command needs them: a warm `check`
# whose results all come from the cache loads none of them (gradfix/warmstart.py)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_FILE_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _codes(values: tuple[str, ...]) -> list[str]:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


def _build(paths, select, ignore, stdin_filename=None, warm: bool = False):
    """(engine, config). With `warm` (a cached `check`), the engine of an earlier run with the same
    code, pyproject.toml and options stands in until a file must be analysed (gradfix/warmstart.py)."""
    start = paths[0] if paths else os.getcwd()
    if start == STDIN:
        start = os.path.dirname(os.path.abspath(stdin_filename)) if stdin_filename else os.getcwd()
    config = None
    memo = recalled = None
    pyproject = find_pyproject(start)       # once: the cache's root, the engine's key and the config read it
    if warm:
        from gradfix import warmstart
        from gradfix.cache import Cache

        memo = (Cache(warmstart.cache_root(start, pyproject)),
                warmstart.engine_key(start, tuple(select), tuple(ignore), pyproject))
        recalled = warmstart.recall(*memo)
    try:
        if recalled is not None:
            known = recalled[0]
        else:
            from gradfix.codemods import RULES_BY_ID

            known = set(RULES_BY_ID)
        config = load_config(start, known, pyproject=pyproject)
        sel, ign = _codes(select), _codes(ignore)
        for code in sel + ign:
            check_selector(code, known, "--select/--ignore")
        if sel:
            config.select = sel
        config.ignore = list(config.ignore) + ign
        if recalled is not None:
            engine = warmstart.WarmEngine(config, recalled[1])
        else:
            from gradfix.codemods import ALL_RULES
            from gradfix.engine import Engine

            engine = Engine(ALL_RULES, config)
            if memo is not None:
                warmstart.remember(*memo, known, engine)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    except ValueError as exc:  # a rule option of the wrong kind: name where it came from
        where = f"{config.path}: [tool.gradfix.rules] " if config is not None and config.path else ""
        raise click.UsageError(f"{where}{exc}") from exc
    return engine, config


def _print_errors(report: RunReport) -> None:
    for e in report.errors:
        where = f"{e.path}:{line_label(e.line, e.cell)}" if e.line else e.path
        click.echo(f"{where}: error: {e.message}", err=True)


def _exit(report: RunReport, findings: bool, exit_zero: bool = False) -> int:
    if report.errors:
        return EXIT_FILE_ERROR
    return EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN


common_options = [
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option("--select", multiple=True, help="Rule ids or prefixes to enable (comma-separated)."),
    click.option("--ignore", multiple=True, help="Rule ids or prefixes to disable (comma-separated)."),
    # -- output, exit status and standard input (Ruff's spellings) --
    click.option("--output-format", "--format", "fmt", type=click.Choice(FORMATS), default="text",
                 show_default=True, help="Report format (github: workflow annotations; gitlab: Code Quality; "
                 "sarif: SARIF 2.1.0; junit: JUnit XML)."),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain (errors still exit 2 or 3)."),
    click.option("--stdin-filename", metavar="PATH", help="Name to report, and to match config against, for `-`."),
]


def with_common(fn):
    for opt in reversed(common_options):
        fn = opt(fn)
    return fn


def jobs_and_cache(fn):
    fn = click.option("--no-cache", is_flag=True, envvar="GRADFIX_NO_CACHE",
                      help="Read and write no cached results (.gradfix_cache/ under the project root).")(fn)
    return click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                        help="Processes: files are analysed in parallel on every core by default; the verifier "
                             "uses this many workers (default 1).")(fn)


def _shard(value: str | None):
    if value is None:
        return None
    from gradfix.shard import parse

    return parse(value)


def _jobs(jobs: int | None) -> int:
    from gradfix.parallel import default_jobs

    return jobs if jobs is not None else default_jobs()


def _cache(config: Config, no_cache: bool):
    if no_cache:
        return None
    from gradfix.cache import Cache, cache_folder

    return Cache(cache_folder(config.root))


verify_env_options = [
    click.option("--python", "python", metavar="PATH", default=None,
                 help="Interpreter (or virtual environment) the verifier runs the code in; default: "
                      "[tool.gradfix] python, $VIRTUAL_ENV, .venv or venv at the project root, else gradfix's own."),
    click.option("--root", "roots", metavar="DIR", multiple=True,
                 help="Extra import root for the project's own modules (repeatable; adds to [tool.gradfix] root)."),
    click.option("--memory-limit", type=click.IntRange(min=1), default=None, metavar="MB",
                 help="Memory a verification check may allocate [default: 4096]."),
    click.option("--cpu-limit", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S",
                 help="CPU seconds per verification check [default: the --timeout]."),
]


def with_verify_env(fn):
    for opt in reversed(verify_env_options):
        fn = opt(fn)
    return fn


def _verifier(enabled: bool, jobs: int, timeout: float, config: Config | None = None, env_opts: dict | None = None):
    if not enabled:
        return None
    from gradfix.verify import Verifier
    from gradfix.verify.environment import Containment, EnvironmentError_, resolve_python, resolve_roots

    config = config or Config()
    opts = env_opts or {}
    project = config.root or os.getcwd()
    try:
        python = resolve_python(opts.get("python"), config.python, config.root, project)
        roots = resolve_roots(tuple(opts.get("roots") or ()), os.getcwd(), "--root")
        roots += resolve_roots(config.import_roots, config.root, "[tool.gradfix] root")
    except EnvironmentError_ as exc:
        raise click.UsageError(str(exc)) from exc
    memory = opts.get("memory_limit") or config.memory_limit_mb
    containment = Containment(roots=roots, cpu_s=opts.get("cpu_limit") or config.cpu_limit_s,
                              **({"memory_mb": memory} if memory else {}))
    return Verifier(jobs=jobs, timeout_s=timeout, python=python, containment=containment)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gradfix")
def main() -> None:
    """Find and fix PyTorch training hazards; every rewrite is verified by a gradient-equivalence test."""


@main.command()
@with_common
@click.option("--verify", is_flag=True, help="Also run the verifier on each fix and show its verdict (writes nothing).")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of each finding.")
@jobs_and_cache
@click.option("--timeout", default=20.0, show_default=True, help="CPU seconds per verification check (its own CPU time, not wall time).")
@click.option("--unsafe-fixes", is_flag=True, help="With --verify, count `changes-behaviour` fixes as applicable.")
@click.option("--shard", metavar="I/N", default=None, callback=lambda _c, _p, v: _shard(v),
              help="Check only the I-th of N shares of the files (split by path; `gradfix merge` joins the reports).")
@with_verify_env
def check(paths, select, ignore, fmt, exit_zero, stdin_filename, verify, statistics, jobs, no_cache, timeout,
          unsafe_fixes, shard, **env_opts):
    """List hazards (`-` reads standard input). Exit 0 clean, 1 findings, 2 usage error, 3 unreadable file."""
    paths = paths or (".",)
    if shard is not None:
        if verify:
            raise click.UsageError("--shard works with check, not check --verify")
    engine, config = _build(paths, select, ignore, stdin_filename, warm=not verify and not no_cache)
    verdicts: dict[tuple[str, int, str], tuple[str, str]] | None = None
    progress = progress_for("verifying" if verify else "checking", True)
    try:
        if verify:
            verdicts = {}
            verifier = _verifier(True, jobs or 1, timeout, config, env_opts)
            try:
                report = fix_paths(engine, paths, config, lambda p: (lambda cs: _reject_all(cs)), verifier=verifier,
                                   stdin_name=stdin_filename, progress=progress, jobs=_jobs(jobs),
                                   cache=_cache(config, no_cache))
            finally:
                verifier.close()
            for res in report.fixes:
                for c in res.changes:
                    verdicts[(res.path, c.finding.cell, c.finding.span.line, c.rule)] = (c.verdict.value, c.detail)
                # every change was rejected, so the findings are those of the file as it is
                report.lints.append(FileLint(res.path, res.findings))
        else:
            report = lint_paths(engine, paths, config, stdin_name=stdin_filename, progress=progress, jobs=_jobs(jobs),
                                cache=_cache(config, no_cache), shard=shard)
    except KeyboardInterrupt:
        click.echo("interrupted: nothing was written", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if progress is not None:
            progress.stop()
    result = from_lints(report, verdicts, unsafe_fixes)
    if statistics:
        from gradfix.report.text import render_statistics, statistics as stats

        if fmt == "json":
            import json

            click.echo(json.dumps(stats(result), indent=2))
        else:
            click.echo(render_statistics(result), nl=False)
    else:
        click.echo(render(fmt, result), nl=False)
    if fmt not in EMBEDS_ERRORS or statistics:
        _print_errors(report)
    sys.exit(_exit(report, bool(result.entries), exit_zero))


@main.command()
@click.argument("reports", nargs=-1, required=True, type=click.File("r"))
def merge(reports):
    """Join the JSON or SARIF reports of `check --shard` runs into one (printed)."""
    from gradfix.shard import merge as merge_reports

    click.echo(merge_reports([r.read() for r in reports]), nl=False)


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
@click.option("--show-fixes", is_flag=True, help="List the fixes per file and rule after the summary.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a file was changed, even if nothing remains.")
@jobs_and_cache
@click.option("--timeout", default=20.0, show_default=True, help="CPU seconds per verification check (its own CPU time, not wall time).")
@with_verify_env
def apply(paths, select, ignore, fmt, exit_zero, stdin_filename, diff, interactive, no_verify, unsafe_fixes,
          allow_untestable, show_fixes, exit_non_zero_on_fix, jobs, no_cache, timeout, **env_opts):
    """Apply verified rewrites (or print them with --diff); `apply -` prints standard input fixed."""
    from gradfix.engine import Policy, policy_decider
    from gradfix.notebook import file_diff

    paths = paths or (".",)
    engine, config = _build(paths, select, ignore, stdin_filename)
    policy = Policy(unsafe_fixes=unsafe_fixes, allow_untestable=allow_untestable)
    if interactive:
        if diff:
            raise click.UsageError("-i and --diff cannot be combined")
        if STDIN in paths:
            raise click.UsageError("-i cannot review standard input; use `gradfix apply - --diff`")
        from gradfix.cli.interactive import run_interactive

        make = (lambda: _verifier(True, jobs or 1, timeout, config, env_opts)) if not no_verify else None
        sys.exit(run_interactive(engine, config, paths, policy, verify=not no_verify, jobs=jobs or 1,
                                 timeout=timeout, make_verifier=make))
    written: list[str] = []
    progress = progress_for("verifying" if not no_verify else "fixing", True)
    verifier = _verifier(not no_verify, jobs or 1, timeout, config, env_opts)
    try:
        report = fix_paths(engine, paths, config, lambda p: policy_decider(policy), verifier=verifier,
                           write=not diff, stdin_name=stdin_filename, progress=progress,
                           after_file=lambda r: written.append(r.path) if r.fixed != r.original else None,
                           jobs=_jobs(jobs), cache=_cache(config, no_cache))
    except KeyboardInterrupt:
        if progress is not None:
            progress.stop()
        _interrupted(written, diff)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if progress is not None:
            progress.stop()
        if verifier is not None:
            verifier.close()
    from gradfix.report.fixes import render_apply_json, summary_lines

    remaining = sum(len(r.findings) for r in report.fixes)
    changed = [r for r in report.fixes if r.fixed != r.original]
    to_stdin = STDIN in paths and not diff and fmt in ("text", "concise")
    if fmt == "json":
        click.echo(render_apply_json(report, diff), nl=False)
    elif fmt in ("text", "concise"):
        if diff:
            for r in changed:
                click.echo(file_diff(r.original, r.fixed, r.path), nl=False)
        elif to_stdin:
            for r in report.fixes:
                click.echo(r.fixed, nl=False)
        for line in summary_lines(report, diff, show_fixes):
            click.echo(line, err=diff or to_stdin)
    else:
        click.echo(render(fmt, from_fixes(report)), nl=False)
    if fmt not in EMBEDS_ERRORS:
        _print_errors(report)
    findings_left = remaining > 0 or (diff and bool(changed)) or (exit_non_zero_on_fix and bool(changed))
    sys.exit(_exit(report, findings_left, exit_zero))


def _interrupted(written: list[str], diff: bool) -> None:
    if diff or not written:
        click.echo("interrupted: no file was written", err=True)
        return
    click.echo(f"interrupted: {len(written)} file{'s' if len(written) != 1 else ''} had been written "
               f"(each completely, atomically); no other file was changed:", err=True)
    for path in written:
        click.echo(f"  {path}", err=True)


@main.command()
@click.argument("rule_id", required=False)
@click.option("--all", "show_all", is_flag=True, help="Print every rule's documentation.")
def rule(rule_id, show_all):
    """Explain a rule (Markdown), by id or name: `gradfix rule GF101`, `gradfix rule inplace-on-activation`;
    without one, list the rules."""
    from gradfix.codemods import ALL_RULES, RULES_BY_ID

    if show_all:
        click.echo("\n\n".join(r.documentation() for r in ALL_RULES))
        return
    if rule_id is None:
        for r in ALL_RULES:
            click.echo(f"{r.id}  {r.name:<28} {r.summary}")
        return
    r = RULES_BY_ID.get(rule_id.upper()) or next((x for x in ALL_RULES if x.name == rule_id.lower()), None)
    if r is None:
        raise click.UsageError(f"unknown rule {rule_id!r} (`gradfix rule` lists them)")
    click.echo(r.documentation())


@main.command()
def lsp():
    """Start the language server on stdio (needs the lsp extra: pip install 'gradfix[lsp]').

    \b
    Editors: Neovim 0.8 or newer (0.10+ for pull diagnostics; 0.7 lacks vim.lsp.start
    and vim.fs, so the README's config fails there), VS Code with a generic LSP client.
    See the README, "Editor integration".
    """
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        click.echo(f"error: `gradfix lsp` needs pygls and lsprotocol ({exc}); install them with\n"
                   f"  pip install 'gradfix[lsp]'", err=True)
        sys.exit(EXIT_USAGE)
    from gradfix.cli.lsp import serve

    serve()


from gradfix.probe.command import probe_command  # noqa: E402 - torch loads only when `probe` runs

main.add_command(probe_command)
