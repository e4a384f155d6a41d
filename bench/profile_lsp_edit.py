"""cProfile of the language server's analysis of one edit, in-process (no protocol): the
2,000-line file of bench_lsp.py, its edit sites in turn, through `cli.lsp_documents._lint`.

    .venv/bin/python bench/profile_lsp_edit.py time 16      # CPU and wall per edit site
    .venv/bin/python bench/profile_lsp_edit.py prof 12      # the profile
    SCOPES= .venv/bin/python bench/profile_lsp_edit.py ...  # without per-scope reuse (whole file per edit)
    SITES=0,1,2 ...                                         # only some edit sites (0 forward, 1 loop, 2 config, 3 imports)
"""
import cProfile, pstats, sys, time, os, tempfile, statistics, resource
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lsp import make_source, EDIT_SITES
from gradfix.codemods import ALL_RULES
from gradfix.engine import Engine
from gradfix.incremental import IncrementalParser
from gradfix.analysis.project import ProjectIndex
from gradfix.cli import lsp_documents as lsp

text = make_source(2000)
d = tempfile.mkdtemp(); path = os.path.join(d, "train_big.py"); open(path, "w").write(text)
engine = Engine(ALL_RULES); engine.project = ProjectIndex(d)
parser = IncrementalParser(); scopes = lsp.DocumentScopes() if os.environ.get("SCOPES", "1") else None
timings = []
lsp._lint(engine, text, path, False, timings, parser, scopes)
import gc; gc.collect(); gc.freeze(); gc.set_threshold(50000, 50, 1000)

def edit(text, k):
    lines = text.split("\n")
    sites = [int(x) for x in os.environ.get("SITES", "0,1,2,3").split(",")]
    marker, stop, values = EDIT_SITES[sites[k % len(sites)] if len(sites) < 4 else k % 4]
    targets = [i for i, l in enumerate(lines) if marker in l]
    line = targets[(k * 7) % len(targets)]
    start = lines[line].index(marker) + len(marker)
    end = lines[line].index(stop, start) if stop else len(lines[line])
    new = values[(k // len(EDIT_SITES)) % len(values)]
    if new == lines[line][start:end]:
        new = values[(k // len(EDIT_SITES) + 1) % len(values)]
    lines[line] = lines[line][:start] + new + lines[line][end:]
    return "\n".join(lines)

mode = sys.argv[1] if len(sys.argv) > 1 else "time"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 16
per_site = {i: [] for i in range(4)}
prof = cProfile.Profile() if mode == "prof" else None
for k in range(N):
    text = edit(text, k)
    c0 = time.process_time(); t0 = time.perf_counter()
    if prof: prof.enable()
    f, e = lsp._lint(engine, text, path, False, timings, parser, scopes)
    if prof: prof.disable()
    per_site[k % 4].append((time.perf_counter() - t0, time.process_time() - c0))
for i, v in per_site.items():
    print(f"site {i}: wall median {statistics.median(x[0] for x in v)*1000:.0f} ms cpu median {statistics.median(x[1] for x in v)*1000:.0f} ms")
print("findings", len(f))
if prof:
    st = pstats.Stats(prof); st.sort_stats("cumulative").print_stats(60)
    st.sort_stats("tottime").print_stats(30)
