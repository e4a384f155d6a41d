"""Latency of `gradfix lsp`: from a didChange to the diagnostics for that version.

    .venv/bin/python bench/bench_lsp.py [--lines 2000] [--edits 30] [--check-runs 5] [--no-profile]

A real LSP client (pygls) starts `python -m gradfix lsp` on stdio, opens a generated
training file, and sends one small incremental edit at a time, waiting each time for the
`publishDiagnostics` that carries the new version. The server's debounce is set to 0
(setting `debounceMs`) so the figures are pure work; a shorter run with the default
0.3 s debounce is reported beside them. Side by side, in the same process tree, it
times `gradfix check FILE` as a subprocess (what a naive editor plugin would run per
change). Finally it profiles `Engine.lint_source` in-process on the same text, to show
where the time goes. It also reads the server process's CPU time (Linux /proc) before and
after the edits: CPU per edit is steadier than wall time on a shared machine. Target (issue 15,
goal 6): p95 < 100 ms on 2,000 lines on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.metadata
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
TARGET_P95_S = 0.100

HEADER = '''"""Synthetic training code for the gradfix LSP benchmark."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
'''

# One block: a model, a regulariser, an evaluation loop and a training loop. Every fourth
# block carries the four hazards (GF101 in-place on a saved activation, GF102 detached
# alias, GF103 `.data` write in the loss path, GF201 constant loss scale); the others are
# their clean counterparts.
BLOCK = '''

class Encoder{i}(nn.Module):
    """Block {i}: conv encoder with a normalised projection head."""

    def __init__(self, channels={c}, hidden={h}):
        super().__init__()
        self.feat = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.proj = nn.Linear(channels, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        f = self.feat(x)
        f_log = f.detach(){clone}
        {norm}
        h = torch.relu(self.proj(f))
        h = h + 0.1 * torch.tanh(h)
        return self.head(h).squeeze(-1), f_log


def regularizer_{i}(m: nn.Linear, tau=1e-4):
    {reg}
    return tau * (m.weight.abs().mean())


def evaluate_{i}(model, loader):
    model.eval()
    total, correct = 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits, _ = model(x)
            pred = (logits > 0).float()
            correct += (pred == y).sum().item()
            total += y.numel()
    model.train()
    return correct / max(total, 1)


def train_{i}(loader, epochs=3, lr=1e-3):
    model = Encoder{i}()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        running = 0.0
        for step, (x, y) in enumerate(loader):
            opt.zero_grad(set_to_none=True)
            logits, feats = model(x)
            base = F.binary_cross_entropy_with_logits(logits, y)
            reg = regularizer_{i}(model.head, 1e-4)
            loss = (base + reg){scale}
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            running += loss.item()
            if step % 50 == 0:
                history.append(running / (step + 1))
    return model, history
'''


# (text just before the edited span, text just after it or "" for the line's end, replacements)
EDIT_SITES = [
    ("h = h + ", " *", ["0.2", "0.3", "0.05", "0.1"]),                       # a model's forward
    ("if step % ", " ==", ["25", "100", "10", "50"]),                          # a training loop
    ("{'lr': ", ",", ["3e-4", "1e-2", "5e-4", "1e-3"]),                        # module-level configuration
    ("import math", "", [", os", "  # for sqrt", ", sys", ""]),               # the imports
]

SITE_NAMES = ["forward", "training loop", "module-level config", "imports"]


def make_source(lines: int = 2000) -> str:
    text = HEADER
    i = 0
    while True:
        hazard = i % 4 == 0
        block = BLOCK.format(
            i=i, c=8 + i % 8, h=16 + i % 16,
            clone="" if hazard else ".clone()",
            norm="f /= (f.norm(dim=1, keepdim=True) + 1e-6)" if hazard else "f = f / (f.norm(dim=1, keepdim=True) + 1e-6)",
            reg=("with torch.no_grad():\n        m.weight.data = torch.clamp(m.weight.data, -1.0, 1.0)" if hazard
                 else "penalty = m.weight.pow(2).sum()"),
            scale=" / 1000000000" if hazard else "",
        )
        if (text + block).count("\n") > lines - 2:
            break
        text += block
        i += 1
    n = text.count("\n")
    while n < lines:
        text += f"CONFIG_{n} = {{'lr': 1e-3, 'epochs': {i}}}\n"
        n += 1
    return text


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q * (len(s) - 1)))))
    return s[k]


class Session:
    """One server process and one open document."""

    def __init__(self, path: Path, text: str, debounce_ms: float):
        self.path, self.text, self.debounce_ms = path, text, debounce_ms
        self.uri = path.as_uri()
        self.version = 1
        self.arrived: dict[int, tuple[float, int]] = {}
        self.waiters: dict[int, asyncio.Future] = {}
        self.client = LanguageClient("gradfix-bench", "1")

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: T.PublishDiagnosticsParams):
            if params.uri != self.uri or params.version is None:
                return
            self.arrived[params.version] = (time.perf_counter(), len(params.diagnostics))
            fut = self.waiters.pop(params.version, None)
            if fut is not None and not fut.done():
                fut.set_result(None)

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "gradfix", "lsp")
        caps = T.ClientCapabilities(text_document=T.TextDocumentClientCapabilities(
            publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True)))
        await self.client.initialize_async(T.InitializeParams(
            capabilities=caps, process_id=os.getpid(), root_uri=self.path.parent.as_uri(),
            initialization_options={"gradfix": {"debounceMs": self.debounce_ms}}))
        self.client.initialized(T.InitializedParams())
        t0 = time.perf_counter()
        fut = self._wait(1)
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
            uri=self.uri, language_id="python", version=1, text=self.text)))
        await asyncio.wait_for(fut, 600)
        self.open_s = self.arrived[1][0] - t0
        self.findings = self.arrived[1][1]

    def _wait(self, version: int) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.waiters[version] = fut
        return fut

    async def edit(self, k: int) -> float:
        """One keystroke-sized edit, in turn in each of the places people type (EDIT_SITES):
        a model's forward, a training loop, module-level configuration, and the imports
        (which every function's data flow reads, so that edit re-analyses the whole file)."""
        lines = self.text.split("\n")
        marker, stop, values = EDIT_SITES[k % len(EDIT_SITES)]
        targets = [i for i, l in enumerate(lines) if marker in l]
        if not targets:  # a small file without that site: edit a forward
            marker, stop, values = EDIT_SITES[0]
            targets = [i for i, l in enumerate(lines) if marker in l]
        line = targets[(k * 7) % len(targets)]
        start = lines[line].index(marker) + len(marker)
        end = lines[line].index(stop, start) if stop else len(lines[line])
        new = values[(k // len(EDIT_SITES)) % len(values)]
        if new == lines[line][start:end]:
            new = values[(k // len(EDIT_SITES) + 1) % len(values)]
        lines[line] = lines[line][:start] + new + lines[line][end:]
        self.text = "\n".join(lines)
        self.version += 1
        fut = self._wait(self.version)
        t0 = time.perf_counter()
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(start=T.Position(line=line, character=start), end=T.Position(line=line, character=end)),
                text=new)]))
        await asyncio.wait_for(fut, 600)
        return self.arrived[self.version][0] - t0

    def cpu_s(self) -> float | None:
        """The server process's user + system CPU seconds so far (None off Linux)."""
        proc = getattr(self.client, "_server", None)
        try:
            with open(f"/proc/{proc.pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (AttributeError, OSError, ValueError, IndexError):
            return None

    async def info(self) -> dict:
        info = await self.client.workspace_execute_command_async(T.ExecuteCommandParams(command="gradfix.debugInfo"))
        return info if isinstance(info, dict) else {}

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def measure(path: Path, text: str, edits: int, debounce_ms: float) -> dict:
    s = Session(path, text, debounce_ms)
    await s.start()
    opened = await s.info()
    cpu0 = s.cpu_s()
    latencies = [await s.edit(k) for k in range(edits)]
    cpu1 = s.cpu_s()
    info = await s.info()
    await s.stop()
    return {"open_s": s.open_s, "findings": s.findings, "latencies": latencies,
            "server_lint": list(info.get("lint_s") or [])[1:], "rss_open": opened.get("rss_mib"),
            "rss_end": info.get("rss_mib"), "max_rss": info.get("max_rss_mib"),
            "modes": info.get("scope_modes"), "cpu_per_edit": (cpu1 - cpu0) / max(edits, 1) if cpu0 is not None and cpu1 is not None else None}


PEER_MEMORY = """
import resource, sys
import libcst as cst
from libcst.metadata import PositionProvider
wrapper = cst.MetadataWrapper(cst.parse_module(open(sys.argv[1], encoding="utf-8").read()), unsafe_skip_copy=True)
positions = wrapper.resolve(PositionProvider)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def peer_memory(path: Path) -> float:
    """Peak RSS (MiB) of a process that holds the document as a libcst tree with positions:
    the least a tree-based server keeps per open file."""
    out = subprocess.run([sys.executable, "-c", PEER_MEMORY, str(path)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def time_check(path: Path, runs: int) -> tuple[list[float], int]:
    cmd = [sys.executable, "-m", "gradfix", "check", str(path)]
    times, rc = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        times.append(time.perf_counter() - t0)
    return times, rc


PROFILE_BUCKETS = [
    # (label, file part, function): cumulative times, so nested buckets overlap
    ("libcst parse (native parser)", "gradfix/engine.py", "parse"),
    ("tree index: children + parents (one libcst visit)", "gradfix/analysis/tree.py", "index_tree"),
    ("libcst metadata (PositionProvider, lazily)", "libcst/metadata/wrapper.py", "resolve"),
    ("import map", "gradfix/analysis/names.py", "__init__"),
    ("suppression comments (tokenize)", "gradfix/suppression.py", "suppressions"),
    ("data-flow per scope (Flow.__init__)", "gradfix/analysis/flow.py", "__init__"),
    ("training-loop detection", "gradfix/analysis/loops.py", "find_training_loops"),
]


def profile(text: str, path: str) -> None:
    """Unprofiled wall time of Engine.lint_source, then cProfile's split of it into stages
    (profiler overhead inflates pure-Python code, so the shares are approximate)."""
    from gradfix.codemods import ALL_RULES

    from gradfix.engine import Engine

    engine = Engine(ALL_RULES)
    engine.lint_source(text, path)                       # warm imports and caches
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        engine.lint_source(text, path)
        walls.append(time.perf_counter() - t0)
    wall = statistics.median(walls)

    prof = cProfile.Profile()
    prof.enable()
    engine.lint_source(text, path)
    prof.disable()
    stats = pstats.Stats(prof)
    cum: dict[tuple[str, str], float] = {}
    calls: dict[tuple[str, str], int] = {}
    for (filename, _line, func), (_cc, nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = (filename.replace(str(REPO) + "/", "").split("site-packages/")[-1], func)
        cum[key] = cum.get(key, 0.0) + ct
        calls[key] = calls.get(key, 0) + nc
    total = sum(v for (f, fn), v in cum.items() if f == "gradfix/engine.py" and fn == "lint_source") or 1.0

    def share(file_part: str, func: str) -> float:
        return sum(v for (f, fn), v in cum.items() if file_part in f and fn == func) / total

    print(f"\nWhere the time goes: Engine.lint_source on the same file, in-process: {wall * 1000:.0f} ms "
          f"(median of 3); split by cProfile (cumulative, nested stages overlap):")
    rows = [(label, share(fp, fn)) for label, fp, fn in PROFILE_BUCKETS]
    for rule_file in sorted({f for (f, fn) in cum if f.startswith("codemods/gf") and fn == "check"}):
        rows.append((f"rule {rule_file.split('/')[-1][:-3]}.check", share(rule_file, "check")))
    for label, frac in rows:
        if frac > 0:
            print(f"  {label:<55} {frac * 100:5.1f}%  ~{frac * wall * 1000:6.0f} ms")
    n_children = calls.get(("libcst/_nodes/base.py", "children"), 0)
    print(f"  CSTNode.children evaluated {n_children} times "
          f"({share('libcst/_nodes/base.py', 'children') * 100:.0f}% of the time)")
    print("  top cumulative entries in gradfix's own code (libcst's recursive codegen/visit entries are left out:"
          " cProfile double-counts recursion):")
    own = [(k, v) for k, v in cum.items() if k[0].startswith(("gradfix/", "codemods/"))]
    for (f, fn), v in sorted(own, key=lambda kv: -kv[1])[1:11]:
        print(f"    {v / total * 100:5.1f}%  {f}:{fn}")


def report(name: str, r: dict) -> None:
    lat = r["latencies"]
    print(f"{name}: {len(lat)} edits, didChange -> publishDiagnostics (same version)")
    print(f"  median {statistics.median(lat) * 1000:7.0f} ms   p95 {pct(lat, 0.95) * 1000:7.0f} ms   "
          f"min {min(lat) * 1000:6.0f} ms   max {max(lat) * 1000:6.0f} ms")
    if len(lat) >= 2 * len(EDIT_SITES):
        parts = []
        for j, (marker, _stop, _values) in enumerate(EDIT_SITES):
            mine = lat[j::len(EDIT_SITES)]
            parts.append(f"{SITE_NAMES[j]} {statistics.median(mine) * 1000:.0f}")
        print("  median by edit site (ms): " + ", ".join(parts))
    if r.get("modes"):
        print(f"  server analyses (per document: whole file / changed scopes only / all reused): {r['modes']}")
    if r.get("cpu_per_edit") is not None:
        print(f"  server CPU time per edit (user + system, /proc): {r['cpu_per_edit'] * 1000:.0f} ms")
    sl = r["server_lint"]
    if sl:
        line = f"  server-side Engine.lint_source: median {statistics.median(sl) * 1000:7.0f} ms"
        if len(sl) == len(lat):       # one lint per edit: the rest is debounce, protocol and JSON
            rest = [a - b for a, b in zip(lat, sl)]
            line += f"; the rest (debounce, protocol, JSON): median {statistics.median(rest) * 1000:.0f} ms"
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--debounce-edits", type=int, default=10, help="edits for the run with the default debounce")
    ap.add_argument("--check-runs", type=int, default=5)
    ap.add_argument("--small-lines", type=int, default=200, help="also time a small file (0: skip)")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()

    text = make_source(args.lines)
    work = Path(tempfile.mkdtemp(prefix="gradfix-bench-lsp-"))
    path = work / "train_big.py"
    path.write_text(text, encoding="utf-8")
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"command: {sys.executable} -m gradfix lsp   (client: pygls {importlib.metadata.version('pygls')} over stdio)")
    print(f"file: {path} ({text.count(chr(10))} lines, {len(text)} chars); machine: {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}")

    fast = asyncio.run(measure(path, text, args.edits, 0))
    print(f"open -> first diagnostics: {fast['open_s'] * 1000:.0f} ms ({fast['findings']} findings)")
    report("debounceMs=0 (pure work)", fast)
    if fast["max_rss"]:
        peer = peer_memory(path)
        print(f"memory: server RSS {fast['rss_open']:.0f} MiB after open, {fast['rss_end']:.0f} MiB after "
              f"{len(fast['latencies'])} edits, peak {fast['max_rss']:.0f} MiB; peer (a process holding the file as "
              f"a libcst tree with positions) peak {peer:.0f} MiB; ratio server/peer (peaks) = "
              f"{fast['max_rss'] / peer:.2f}x")
    if args.debounce_edits:
        slow = asyncio.run(measure(path, text, args.debounce_edits, 300))
        report("debounceMs=300 (default; the debounce is part of this latency)", slow)

    if args.small_lines:
        small_text = make_source(args.small_lines)
        small = work / "train_small.py"
        small.write_text(small_text, encoding="utf-8")
        r = asyncio.run(measure(small, small_text, args.edits, 0))
        report(f"for scale, a {small_text.count(chr(10))}-line file ({r['findings']} findings), debounceMs=0", r)

    check_times, rc = time_check(path, args.check_runs)
    print(f"peer: `{sys.executable} -m gradfix check {path}` as a subprocess, {len(check_times)} runs (exit {rc}):")
    print(f"  median {statistics.median(check_times) * 1000:7.0f} ms   p95 {pct(check_times, 0.95) * 1000:7.0f} ms")
    ratio = statistics.median(check_times) / statistics.median(fast["latencies"])
    print(f"ratio: `gradfix check` subprocess / LSP didChange->diagnostics (medians) = {ratio:.2f}x")
    p95 = pct(fast["latencies"], 0.95)
    verdict = "MET" if p95 < TARGET_P95_S else "MISSED"
    print(f"target p95 < {TARGET_P95_S * 1000:.0f} ms (debounce 0): {verdict} ({p95 * 1000:.0f} ms)")
    if not args.no_profile:
        profile(text, str(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
