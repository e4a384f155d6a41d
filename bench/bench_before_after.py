"""Cold `check` of two gradfix versions and Ruff, alternating, on packages of the pinned corpus.

bench_check.py times one version; a change to scan speed is judged by timing the version
before it in the same minutes (the machine is shared: CPU time, alternated, is the steadier
figure). The version before is a pinned copy laid out as bench/survey.py describes
(`git archive COMMIT gradfix codemods cli`, codemods/ and cli/ copied into the package):

    .venv/bin/python bench/bench_before_after.py --before /tmp/gf/pkg [--after DIR]
        [--packages accelerate-1.15.0,pytorch_lightning-2.6.6] [--repeat 2] [--warm]

With `--warm`, gradfix runs with its cache, filled by an untimed run of each version first (each
version has a cache folder of its own: the folder is keyed by gradfix's source files). Both
versions are byte-compiled first, as bench_check.py does.

`--after` defaults to this checkout (the venv's install). Packages are folder names under
the corpus cache's src/ (bench_check.py --corpus fetches them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import compile_gradfix, timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="folder put first on PYTHONPATH for the version before")
    ap.add_argument("--after", default="", help="the same for the version after (default: this checkout)")
    ap.add_argument("--packages", default="accelerate-1.15.0,pytorch_lightning-2.6.6")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--warm", action="store_true", help="time cached runs (each version's cache filled first)")
    ap.add_argument("--cache-dir", default=os.environ.get("GRADFIX_BENCH_CACHE", "~/.cache/gradfix-bench"))
    args = ap.parse_args()
    src = Path(args.cache_dir).expanduser() / "src"
    dirs = [d for d in args.packages.split(",") if d]
    missing = [d for d in dirs if not (src / d).is_dir()]
    if missing:
        sys.exit(f"not in {src}: {', '.join(missing)} (run bench_check.py --corpus first)")
    ruff = Path(sys.executable).with_name("ruff")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    gradfix = [sys.executable, "-m", "gradfix", "check", *([] if args.warm else ["--no-cache"]), "--exit-zero", *dirs]
    compile_gradfix()
    for folder in (args.before, args.after):
        if folder:
            subprocess.run([sys.executable, "-m", "compileall", "-q", folder], stdout=subprocess.DEVNULL, check=False)

    def run(pythonpath: str | None, cmd: list[str]) -> tuple[float, float]:
        os.environ.clear()
        os.environ.update(base if not pythonpath else {**base, "PYTHONPATH": pythonpath})
        return timed(cmd, cwd=str(src))

    sides = {"before": lambda: run(args.before, gradfix), "after": lambda: run(args.after, gradfix)}
    if args.warm:
        for fill in sides.values():
            fill()                       # untimed: fills that version's cache
    if ruff.exists():
        sides["ruff E,F"] = lambda: run(None, [str(ruff), "check", "--select", "E,F", "--no-cache", "--exit-zero",
                                               "-q", *dirs])
    best: dict[str, tuple[float, float]] = {}
    for r in range(args.repeat):
        for name, fn in sides.items():
            wall, cpu = fn()
            best[name] = min(best.get(name, (wall, cpu)), (wall, cpu), key=lambda t: t[1])
            print(f"run {r + 1} {name:8s}: {wall:7.2f} s wall, {cpu:7.2f} s CPU (load {os.getloadavg()[0]:.1f})",
                  flush=True)
    print(f"best CPU of {args.repeat}: " + ", ".join(f"{k} {v[1]:.2f} s" for k, v in best.items()))
    if "ruff E,F" in best:
        rc = best["ruff E,F"][1]
        print(f"ratio to ruff (CPU): before {best['before'][1] / rc:.1f}x, after {best['after'][1] / rc:.1f}x; "
              f"after / before {best['after'][1] / best['before'][1]:.2f}")
        rw = best["ruff E,F"][0]
        print(f"ratio to ruff (wall, of the best-CPU runs): before {best['before'][0] / rw:.1f}x, "
              f"after {best['after'][0] / rw:.1f}x")


if __name__ == "__main__":
    main()
