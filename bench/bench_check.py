"""Scan speed of `gradfix check`, as a ratio against peers run side by side.

Two modes, each running every tool as a subprocess of this script, alternating, best of R:

* generated tree (default): the golden inputs copied until the tree has ~N lines; the peer
  is the floor any libcst-based linter pays (a fresh process that parses every file with
  libcst and resolves positions).

      .venv/bin/python bench/bench_check.py [--lines 20000] [--repeat 3]

* pinned corpus (`--corpus`): six PyTorch libraries (issue 15), fetched with
  `pip download --no-deps NAME==VER` into a cache folder outside the repository
  (`--cache-dir`, default ~/.cache/gradfix-bench) and extracted on first use. Peers: Ruff
  (`ruff check --select E,F --no-cache`) and TorchFix, where installed in this venv
  (`pip install ruff torchfix==0.7.0`: bench-only tools, not gradfix dependencies). gradfix
  runs cold (`--no-cache`) and warm (its cache filled by an untimed run first).

      .venv/bin/python bench/bench_check.py --corpus [--packages accelerate,timm] [--repeat 2]
          [--torchfix-packages accelerate] [--jobs N]

The machine may be shared: the 1-minute load average is printed with each figure, and
CPU-time ratios are the steadier ones. gradfix's modules are byte-compiled first (compile_gradfix:
what an installed wheel has, where PYTHONDONTWRITEBYTECODE would otherwise make each run compile them).
"""

from __future__ import annotations

import argparse
import os
import zipfile
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER = """
import sys, pathlib, libcst as cst
from libcst.metadata import PositionProvider, ParentNodeProvider
for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):
    w = cst.MetadataWrapper(cst.parse_module(p.read_text()), unsafe_skip_copy=True)
    w.resolve(PositionProvider); w.resolve(ParentNodeProvider)
"""


def make_tree(dest: Path, lines: int) -> tuple[int, int]:
    sources = [p for p in sorted((ROOT / "golden").rglob("*.py")) if not p.name.endswith(".fixed.py")]
    total = files = 0
    i = 0
    while total < lines:
        src = sources[i % len(sources)]
        out = dest / f"pkg{i // 50}" / f"m{i}.py"
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, out)
        total += src.read_text().count("\n")
        files += 1
        i += 1
    return files, total


def timed(cmd: list[str], cwd: str | None = None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def peak_rss(cmd: list[str], cwd: str | None = None) -> float:
    """Peak resident memory (MiB) of `cmd`, measured by a wrapper process whose only child it is
    (with -j, the largest of gradfix's processes, not their sum)."""
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True, check=True, cwd=cwd)
    return float(out.stdout.strip())


CORPUS = {"transformers": "5.24.0", "diffusers": "0.42.1", "timm": "1.0.31", "torchvision": "0.29.1",
          "accelerate": "1.15.0", "pytorch-lightning": "2.6.6"}


def fetch_corpus(cache: Path, names: list[str]) -> list[tuple[str, Path]]:
    """(name==version, source folder) per package: the pinned wheel when pip can get it, else
    whatever version pip gets (said on stderr)."""
    out = []
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for name in names:
        dist = name.replace("-", "_")
        found = sorted(wheels.glob(f"{dist}-{CORPUS[name]}-*.whl"))
        if not found:
            pin = f"{name}=={CORPUS[name]}"
            ok = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), pin],
                                capture_output=True).returncode == 0
            if not ok:
                print(f"{pin} unavailable; using whatever version pip gets", file=sys.stderr)
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), name],
                               capture_output=True)
            found = sorted(wheels.glob(f"{dist}-{CORPUS[name]}-*.whl")) or sorted(wheels.glob(f"{dist}-*.whl"))
        if not found:
            print(f"{name}: no wheel, skipped", file=sys.stderr)
            continue
        wheel = found[-1]
        version = wheel.name.split("-")[1]
        dest = cache / "src" / f"{dist}-{version}"
        if not dest.exists():
            tmp = dest.with_suffix(".partial")
            shutil.rmtree(tmp, ignore_errors=True)
            with zipfile.ZipFile(wheel) as z:
                z.extractall(tmp, [m for m in z.namelist() if m.endswith(".py") and ".dist-info/" not in m])
            tmp.rename(dest)
        out.append((f"{name}=={version}", dest))
    return out


def count_lines(root: Path) -> tuple[int, int]:
    files = lines = 0
    for p in root.rglob("*.py"):
        files += 1
        lines += p.read_bytes().count(b"\n")
    return files, lines


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def compile_gradfix() -> None:
    """Byte-compile gradfix's own modules, as installing a wheel does: with PYTHONDONTWRITEBYTECODE
    set (this machine sets it) an editable install compiles ~70 modules from source on every run,
    0.3-0.8 s that a user's installed gradfix never pays."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(ROOT / d) for d in ("gradfix", "codemods", "cli"))],
                   stdout=subprocess.DEVNULL, check=False)


def corpus_main(args) -> None:
    cache = Path(args.cache_dir).expanduser()
    compile_gradfix()
    names = [n for n in args.packages.split(",") if n] if args.packages else list(CORPUS)
    fetched = fetch_corpus(cache, names)
    src = cache / "src"
    dirs = [d.name for _, d in fetched]  # relative to src/, where every tool runs
    files = lines = 0
    for _, d in fetched:
        f, n = count_lines(d)
        files, lines = files + f, lines + n
    bindir = Path(sys.executable).parent
    gradfix, ruff, torchfix = (str(bindir / t) for t in ("gradfix", "ruff", "torchfix"))
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    env_cwd = str(src)
    cmds = {
        "gradfix cold": [gradfix, "check", "--no-cache", "--exit-zero", *jobs, *dirs],
        "gradfix warm": [gradfix, "check", "--exit-zero", *jobs, *dirs],
        "ruff E,F": [ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "-q", *dirs],
    }
    if not Path(ruff).exists():
        del cmds["ruff E,F"]
        print("ruff not installed in this venv (pip install ruff): skipped", file=sys.stderr)
    print(f"corpus: {', '.join(n for n, _ in fetched)}: {files} files, {lines:,} lines; "
          f"{os.cpu_count()} cores; {load()}")
    timed(cmds["gradfix warm"], cwd=env_cwd)  # fill the cache (untimed)
    runs: dict[str, list] = {k: [] for k in cmds}
    for r in range(args.repeat):
        for name, cmd in cmds.items():
            wall, cpu = timed(cmd, cwd=env_cwd)
            runs[name].append((wall, cpu, os.getloadavg()[0]))
            print(f"  run {r + 1} {name:13s}: {wall:7.2f} s wall, {cpu:7.2f} s CPU ({load()})", flush=True)
    mems = {name: peak_rss(cmd, cwd=env_cwd) for name, cmd in cmds.items()}
    best = {k: min(v) for k, v in runs.items()}
    print(f"best of {args.repeat}:")
    for name, (wall, cpu, ld) in best.items():
        print(f"  {name:13s}: {wall:7.2f} s wall, {cpu:7.2f} s CPU, peak {mems[name]:6.0f} MiB "
              f"({lines / cpu:,.0f} lines per CPU s; load {ld:.1f})")
    if "ruff E,F" in best:
        rw, rc, _ = best["ruff E,F"]
        for name in ("gradfix cold", "gradfix warm"):
            w, c, _ = best[name]
            print(f"  ratio {name} / ruff: {w / rw:.1f}x wall, {c / rc:.1f}x CPU, "
                  f"{mems[name] / mems['ruff E,F']:.1f}x peak memory")
    if Path(torchfix).exists() and args.torchfix_packages:
        # TorchFix is much slower: paired with gradfix on the packages named only
        for name, d in fetched:
            if name.split("==")[0] not in args.torchfix_packages.split(","):
                continue
            g = [gradfix, "check", "--no-cache", "--exit-zero", "-j", "1", str(d)]
            t = [torchfix, "-j", "1", str(d)]
            pairs = [(timed(g), timed(t)) for _ in range(args.repeat)]
            (gw, gc), (tw, tc) = min(p[0] for p in pairs), min(p[1] for p in pairs)
            print(f"  {name}, one core each: gradfix {gc:.1f} CPU s, torchfix {tc:.1f} CPU s: "
                  f"torchfix / gradfix {tc / gc:.1f}x CPU, {tw / gw:.1f}x wall ({load()})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", action="store_true", help="the six pinned PyTorch libraries instead of a generated tree")
    ap.add_argument("--packages", default="", help="with --corpus: comma-separated subset (default all six)")
    ap.add_argument("--torchfix-packages", default="accelerate", help="with --corpus: packages TorchFix is paired on")
    ap.add_argument("--cache-dir", default=os.environ.get("GRADFIX_BENCH_CACHE", "~/.cache/gradfix-bench"))
    ap.add_argument("--jobs", type=int, default=0, help="gradfix -j (default: every core)")
    args = ap.parse_args()
    if args.corpus:
        corpus_main(args)
        return
    gradfix = str(Path(sys.executable).with_name("gradfix"))
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        files, lines = make_tree(tree, args.lines)
        ours, peer = [], []
        for _ in range(args.repeat):
            ours.append(timed([gradfix, "check", "--no-cache", "-j", "1", str(tree)]))
            peer.append(timed([sys.executable, "-c", PEER, str(tree)]))
        o_mem = peak_rss([gradfix, "check", "--no-cache", "-j", "1", str(tree)])
        p_mem = peak_rss([sys.executable, "-c", PEER, str(tree)])
    o_wall, o_cpu = min(ours)
    p_wall, p_cpu = min(peer)
    print(f"tree: {files} files, {lines} lines (golden inputs repeated)")
    print(f"gradfix check     : {o_wall:6.2f} s wall, {o_cpu:6.2f} s CPU  ({lines / o_wall:,.0f} lines/s)")
    print(f"peer (libcst parse+positions only): {p_wall:6.2f} s wall, {p_cpu:6.2f} s CPU")
    print(f"ratio gradfix / peer: {o_wall / p_wall:.2f}x wall, {o_cpu / p_cpu:.2f}x CPU (best of {args.repeat})")
    print(f"peak memory: gradfix check {o_mem:.0f} MiB, peer {p_mem:.0f} MiB; ratio {o_mem / p_mem:.2f}x")


if __name__ == "__main__":
    main()
