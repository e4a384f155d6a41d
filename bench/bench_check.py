"""Scan speed of `gradfix check`, as a ratio against a peer run side by side.

The peer is the floor any libcst-based linter pays: a fresh process that parses
every file with libcst and resolves positions (what gradfix needs before a rule
runs). Both run as subprocesses of this script on the same generated tree
(the golden inputs, copied until the tree has ~N lines), alternating, best of R.

    .venv/bin/python bench/bench_check.py [--lines 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
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


def timed(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def peak_rss(cmd: list[str]) -> float:
    """Peak resident memory (MiB) of `cmd`, measured by a wrapper process whose only child it is."""
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
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
