"""`apply --diff --no-verify` against `check` on the same generated file, side by side.

The file repeats a module with one fixable GF101 finding (an in-place scale of a
sigmoid's output) between filler functions, so that both its length and its
number of fixes grow. Goal (issue 15): apply costs at most 3x check at any size.

    .venv/bin/python bench/bench_apply.py [--lines 2500] [--fixes 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import peak_rss, timed  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\n\n"
BLOCK = '''

class Gate{i}(nn.Module):
    def __init__(self, channels=32):
        super().__init__()
        self.fc = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        s = torch.sigmoid(self.fc(x))
        s *= 2  # gate in (0, 2)
        return x * s
'''
FILLER = '''

def helper_{i}_{j}(values, scale=2):
    """Plain Python: no rule matches here."""
    total = 0
    for k, v in enumerate(values):
        if k % 3 == 0:
            total += v * scale
        else:
            total -= v
    return total
'''


def make_file(lines: int, fixes: int) -> str:
    blocks = [BLOCK.format(i=i) for i in range(fixes)]
    block_lines = sum(b.count("\n") for b in blocks) + HEADER.count("\n")
    filler_lines = FILLER.count("\n")
    per_gap = max(0, (lines - block_lines) // filler_lines // max(fixes, 1))
    out = [HEADER]
    for i, b in enumerate(blocks):
        out.append(b)
        out.extend(FILLER.format(i=i, j=j) for j in range(per_gap))
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2500)
    ap.add_argument("--fixes", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gradfix = str(Path(sys.executable).with_name("gradfix"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        path.write_text(make_file(args.lines, args.fixes))
        n = path.read_text().count("\n")
        check = [gradfix, "check", "--no-cache", "-j", "1", str(path)]
        apply = [gradfix, "apply", "--diff", "--no-verify", "--unsafe-fixes", "--no-cache", "-j", "1", str(path)]
        found = subprocess.run(check, capture_output=True, text=True).stdout.count("GF101")
        ours, peer = [], []
        for _ in range(args.repeat):
            ours.append(timed(apply))
            peer.append(timed(check))
        mem = peak_rss(apply)
        check_mem = peak_rss(check)
    a_wall, a_cpu = min(ours)
    c_wall, c_cpu = min(peer)
    print(f"file: {n} lines, {found} GF101 findings; load average {os.getloadavg()[0]:.1f}")
    print(f"apply --diff --no-verify: {a_wall:6.2f} s wall, {a_cpu:6.2f} s CPU, peak {mem:.0f} MiB")
    print(f"check                   : {c_wall:6.2f} s wall, {c_cpu:6.2f} s CPU, peak {check_mem:.0f} MiB")
    print(f"ratio apply / check: {a_wall / c_wall:.2f}x wall, {a_cpu / c_cpu:.2f}x CPU (best of {args.repeat})")


if __name__ == "__main__":
    main()
