"""The probe's report: text (a diagnosis per finding, then a rich table of per-layer gradient norms), JSON, plot."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from gradfix.probe.findings import Finding, Layer
from gradfix.probe.frames import display_path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_SCRIPT_FAILED = 0, 1, 2, 3


@dataclass
class Report:
    findings: list[Finding]
    layers: list[Layer]
    steps: int
    error: str | None = None  # the script's traceback when it failed for a reason the probe did not diagnose
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_SCRIPT_FAILED
        return EXIT_FINDINGS if self.findings else EXIT_CLEAN

    def to_json(self) -> dict:
        out = {"findings": [f.to_json() for f in self.findings], "layers": [l.to_json() for l in self.layers],
               "steps": self.steps}
        if self.error is not None:
            out["error"] = self.error
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def text(self, width: int = 120, color: bool = False) -> str:
        from rich.console import Console

        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                          highlight=False)
        render(self, console)
        return buf.getvalue()

    def plot(self, path: str) -> None:
        """A per-layer gradient-norm chart (matplotlib, the `plot` extra)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise RuntimeError("--plot needs matplotlib: pip install 'gradfix[plot]'") from exc
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for layer in self.layers:
            ys = [g if g else float("nan") for g in layer.grad_norms]
            if any(g for g in layer.grad_norms):
                ax.plot(range(1, len(ys) + 1), ys, marker="o", label=layer.name)
        ax.set_yscale("log")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("gradient norm")
        ax.set_title("gradfix probe: gradient norm per parameter")
        if len(self.layers) <= 16:
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _fmt(v: float | None) -> str:
    if v is None:
        return "None"
    return "0" if v == 0 else f"{v:.2e}"


def render(report: Report, console) -> None:
    from rich.table import Table

    for f in report.findings:
        where = f"{display_path(f.path)}:{f.line}" if f.path else "<unknown>"
        rule = f" [{f.rule}]" if f.rule else ""
        console.print(f"[bold]{where}[/bold]: {f.kind}{rule}", markup=True, soft_wrap=True)
        console.print(f"  {f.message}", markup=False, soft_wrap=True)
        for r in f.related:
            console.print(f"  {r['role']}: {display_path(r['path'])}:{r['line']}", markup=False)
        if f.params:
            shown = ", ".join(f.params[:8]) + (f" (+{len(f.params) - 8})" if len(f.params) > 8 else "")
            console.print(f"  params: {shown}", markup=False)
    if report.layers:
        steps = max(len(l.grad_norms) for l in report.layers)
        table = Table(title=f"gradient norm per parameter over {steps} step{'s' if steps != 1 else ''}",
                      title_justify="left")
        table.add_column("parameter")
        table.add_column("shape")
        table.add_column("opt", justify="right")
        cols = list(range(steps)) if steps <= 6 else [0, 1, steps // 2, steps - 2, steps - 1]
        for c in cols:
            table.add_column(f"step {c + 1}", justify="right")
        for l in report.layers:
            name = l.name if l.requires_grad else f"{l.name} (frozen)"
            vals = [_fmt(l.grad_norms[c]) if c < len(l.grad_norms) else "" for c in cols]
            table.add_row(name, "x".join(map(str, l.shape)) or "scalar", str(l.optimizer), *vals)
        console.print(table)
    for n in report.notes:
        console.print(f"note: {n}", markup=False)
    if report.error is not None:
        console.print("The script failed (not diagnosed by the probe):", markup=False)
        console.print(report.error.rstrip(), markup=False, highlight=False)
    n = len(report.findings)
    if n:
        console.print(f"Found {n} finding{'s' if n != 1 else ''} in {report.steps} probed "
                      f"step{'s' if report.steps != 1 else ''}.", markup=False)
    elif report.error is None:
        console.print(f"No training hazard seen in {report.steps} probed step{'s' if report.steps != 1 else ''}.",
                      markup=False)
