"""`gradfix probe SCRIPT [ARGS...]`: the command line front end of the probe (torch loads only when it runs)."""

from __future__ import annotations

import contextlib
import json
import os
import sys

import click

_OWN = {"--steps", "--format", "--plot"}


def _split(args: tuple[str, ...]) -> tuple[dict, list[str]]:
    """Probe options given after the script (`train.py --lr 1 --steps 3`) are the probe's; everything after `--`
    and every other argument goes to the script."""
    own: dict = {}
    rest: list[str] = []
    it = iter(args)
    for a in it:
        if a == "--":
            rest.extend(it)
            break
        name, eq, value = a.partition("=")
        if name in _OWN:
            if not eq:
                value = next(it, None)
                if value is None:
                    raise click.UsageError(f"option {name} requires a value")
            own[name] = value
        else:
            rest.append(a)
    return own, rest


@click.command("probe", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                          "help_option_names": ["-h", "--help"]})
@click.option("--steps", default=5, show_default=True, type=click.IntRange(min=1),
              help="Stop after this many optimizer steps (per optimizer).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a per-layer gradient-norm chart (needs the `plot` extra: matplotlib).")
@click.argument("script", type=click.Path())
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
def probe_command(steps, fmt, plot, script, script_args):
    """Run a training script for a few steps and report where learning stops.

    Exit 0 nothing found, 1 findings, 2 usage error, 3 the script failed for a reason the probe could not
    diagnose. Arguments after SCRIPT go to the script, except --steps, --format and --plot; after `--`, all of
    them do."""
    own, args = _split(script_args)
    if "--steps" in own:
        steps = click.IntRange(min=1).convert(own["--steps"], None, None)
    if "--format" in own:
        fmt = click.Choice(["text", "json"]).convert(own["--format"], None, None)
    plot = own.get("--plot", plot)
    if not os.path.isfile(script):
        raise click.UsageError(f"{script}: no such script")
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise click.UsageError("gradfix probe needs torch (pip install 'gradfix[verify]')") from exc
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise click.UsageError("--plot needs matplotlib: pip install 'gradfix[plot]'") from exc
    from gradfix.probe.runner import run_script

    # JSON goes to stdout, so the script's own prints go to stderr there
    redirect = contextlib.redirect_stdout(sys.stderr) if fmt == "json" else contextlib.nullcontext()
    with redirect:
        report = run_script(script, args, steps=steps)
    if plot:
        report.plot(plot)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from rich.console import Console

        from gradfix.probe.report import render

        render(report, Console(highlight=False, width=None if sys.stdout.isatty() else 120))
        if plot:
            click.echo(f"Wrote {plot}.")
    sys.exit(report.exit_code)
