"""`gradfix probe`: each finding kind on a runnable script (kind, line, parameter names, rule), silence on healthy
training scripts, the exit codes, the context-manager API, and that probing does not change what a script computes.

Scripts run in-process (runpy, as the CLI does) once each, in a module-scoped cache; two tests use a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from gradfix.cli.main import main  # noqa: E402
from gradfix.probe.runner import run_script  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "probe_scripts"
HEALTHY = sorted(p.name for p in SCRIPTS.glob("healthy_*.py"))


@pytest.fixture(scope="module")
def probed():
    cache: dict = {}

    def get(name: str, steps: int = 5):
        key = (name, steps)
        if key not in cache:
            cache[key] = run_script(str(SCRIPTS / name), [], steps=steps)
        return cache[key]

    return get


def line_of(name: str, marker: str) -> int:
    lines = (SCRIPTS / name).read_text().splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if marker in text and not text.lstrip().startswith(('"', "#"))]
    assert len(hits) == 1, (name, marker, hits)
    return hits[0]


# script, kind, the line's marker text, parameter names that must be listed, rule
CASES = [
    ("seed1_inplace.py", "inplace-on-saved-tensor", "f /= (f.norm", [], "GF101"),
    ("inplace_relu_mul.py", "inplace-on-saved-tensor", "h.mul_(2.0)", [], "GF101"),
    ("seed2_loss_scale.py", "vanishing-update", "/ 1000000000", ["0.weight", "2.bias"], "GF201"),
    ("adam_loss_scale.py", "vanishing-update", "loss = mse * 1e-10", ["0.weight", "2.weight"], "GF201"),
    ("cut_detach.py", "no-gradient", "z = z.detach()", ["encoder.0.weight", "encoder.0.bias"], "GF307"),
    ("cut_no_grad.py", "no-gradient", "za = a(x)", ["a.weight", "a.bias"], "GF212"),
    ("frozen_optimizer.py", "nothing-to-train", "opt.step()", ["backbone.0.weight", "backbone.0.bias"], "GF210"),
    ("frozen_optimizer.py", "gradient-outside-optimizer", "opt.step()", ["head.weight", "head.bias"], "GF210"),
    ("stale_optimizer.py", "nothing-to-train", "opt.step()", [], "GF210"),
    ("stale_optimizer.py", "gradient-outside-optimizer", "opt.step()", ["0.weight", "2.bias"], "GF210"),
    ("no_zero_grad.py", "gradient-accumulation", "opt.step()", [], "GF205"),
    ("scheduler_per_batch.py", "epoch-scheduler-per-batch", "scheduler.step()", [], "GF202"),
    ("data_clamp_in_loss.py", "parameter-written-outside-optimizer", "m.weight.data = torch.clamp", ["2.weight"],
     "GF103"),
    ("eval_mode_left_on.py", "eval-mode-while-training", "model.eval()", ["0.weight", "3.bias"], "GF211"),
    ("dead_output.py", "constant-output", "pred = model(x)", ["0.weight"], None),
    ("dead_output.py", "nothing-to-train", "opt.step()", ["0.weight", "2.bias"], None),
]


@pytest.mark.parametrize("name,kind,marker,params,rule", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_finding_kind_line_params(probed, name, kind, marker, params, rule):
    report = probed(name)
    got = [f for f in report.findings if f.kind == kind]
    assert got, [(f.kind, f.message) for f in report.findings]
    f = got[0]
    assert Path(f.path).name == name
    assert f.line == line_of(name, marker), f.message
    assert set(params) <= set(f.params), f.params
    assert f.rule == rule
    assert report.exit_code == 1


def test_each_script_reports_only_its_hazards(probed):
    expected: dict = {}
    for name, kind, *_ in CASES:
        expected.setdefault(name, set()).add(kind)
    for name, kinds in expected.items():
        assert {f.kind for f in probed(name).findings} == kinds, name


def test_inplace_names_forward_and_inplace_lines(probed):
    f = probed("inplace_relu_mul.py").findings[0]
    roles = {r["role"]: r["line"] for r in f.related}
    assert roles["forward"] == line_of("inplace_relu_mul.py", "h = torch.relu(self.fc(x))")
    assert roles["inplace"] == line_of("inplace_relu_mul.py", "h.mul_(2.0)")
    assert roles["backward"] == line_of("inplace_relu_mul.py", "loss.backward()")
    assert "ReluBackward0" in f.message


def test_seed1_in_place_divide_is_the_line(probed):
    f = probed("seed1_inplace.py").findings[0]
    assert {r["role"] for r in f.related} == {"forward", "inplace", "backward"}
    assert "/=" in f.message and "LinalgVectorNormBackward0" in f.message


def test_vanishing_update_names_the_constant(probed):
    f = next(f for f in probed("seed2_loss_scale.py").findings if f.kind == "vanishing-update")
    assert "divided by 1e+09" in f.message and "float32 resolution" in f.message
    a = next(f for f in probed("adam_loss_scale.py").findings if f.kind == "vanishing-update")
    assert "multiplied by 1e-10" in a.message and "eps" in a.message


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_scripts_give_no_finding(probed, name):
    report = probed(name)
    assert report.findings == [], [(f.kind, f.line, f.message) for f in report.findings]
    assert report.error is None
    assert report.steps == 5
    assert report.exit_code == 0


def test_layers_table_and_json_shape(probed):
    report = probed("cut_detach.py")
    out = report.to_json()
    assert set(out) == {"findings", "layers", "steps"}
    assert out["steps"] == 5
    assert set(out["findings"][0]) == {"kind", "message", "path", "line", "params", "rule"}
    layers = {l["name"]: l for l in out["layers"]}
    assert layers["encoder.0.weight"]["grad_norms"] == [None] * 5
    assert all(g > 0 for g in layers["head.weight"]["grad_norms"])
    text = report.text()
    assert "cut_detach.py:15: no-gradient [GF307]" in text.replace("\n", " ") or "no-gradient [GF307]" in text
    assert "head.weight" in text and "None" in text


def test_steps_option_stops_early(probed):
    report = probed("healthy_mlp.py", steps=2)
    assert report.steps == 2
    assert all(len(l.grad_norms) == 2 for l in report.layers)


def _train(with_probe: bool, hazard: bool):
    """A deterministic loop; with hazard=True it also detaches a branch (arming the probe's op tracer) and clamps
    a weight through `.data` inside the loss (arming its line tracing)."""
    import gradfix

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    side = torch.nn.Linear(6, 1)
    opt = torch.optim.Adam([*model.parameters(), *side.parameters()], lr=0.05)
    with torch.no_grad():
        model[2].weight.mul_(6.0)
    ctx = gradfix.probe(steps=4) if with_probe else None
    if ctx is not None:
        ctx.__enter__()
    try:
        for _ in range(6):
            x, y = torch.randn(8, 6), torch.randn(8, 1)
            opt.zero_grad()
            out = model(x) + (side(x).detach() if hazard else side(x))
            if hazard:
                with torch.no_grad():
                    model[2].weight.data = torch.clamp(model[2].weight.data, -1.0, 1.0)
            (out - y).pow(2).mean().backward()
            opt.step()
    except BaseException as exc:
        if ctx is None or not ctx.__exit__(type(exc), exc, exc.__traceback__):
            raise
    else:
        if ctx is not None:
            ctx.__exit__(None, None, None)
    return [p.detach().clone() for p in [*model.parameters(), *side.parameters()]], ctx


@pytest.mark.parametrize("hazard", [False, True])
def test_probe_does_not_change_what_the_script_computes(hazard):
    plain, _ = _train(False, hazard)
    # the probe stops after 4 steps: compare with a plain run of the same 4 steps
    torch.manual_seed(0)
    probed_params, probe = _train(True, hazard)
    assert probe.total_steps == 4
    ref = _train_steps(4, hazard)
    assert all(torch.equal(a, b) for a, b in zip(probed_params, ref))
    kinds = {f.kind for f in probe.result().findings}
    assert kinds == ({"no-gradient", "parameter-written-outside-optimizer"} if hazard else set())


def _train_steps(n: int, hazard: bool):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    side = torch.nn.Linear(6, 1)
    opt = torch.optim.Adam([*model.parameters(), *side.parameters()], lr=0.05)
    with torch.no_grad():
        model[2].weight.mul_(6.0)
    for _ in range(n):
        x, y = torch.randn(8, 6), torch.randn(8, 1)
        opt.zero_grad()
        out = model(x) + (side(x).detach() if hazard else side(x))
        if hazard:
            with torch.no_grad():
                model[2].weight.data = torch.clamp(model[2].weight.data, -1.0, 1.0)
        (out - y).pow(2).mean().backward()
        opt.step()
    return [p.detach().clone() for p in [*model.parameters(), *side.parameters()]]


def test_context_manager_api_reports_and_unhooks():
    import gradfix
    from torch.optim.optimizer import _global_optimizer_post_hooks

    before = len(_global_optimizer_post_hooks)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradfix.probe(steps=3) as p:
        for _ in range(10):
            model(torch.randn(4, 3)).pow(2).mean().backward()  # no zero_grad
            opt.step()  # api-step
    assert p.total_steps == 3
    assert len(_global_optimizer_post_hooks) == before
    text = p.report()
    assert "gradient-accumulation [GF205]" in text and "weight" in text
    src = Path(__file__).read_text().splitlines()
    step_line = next(i + 1 for i, t in enumerate(src) if t.endswith("# api" + "-step"))
    assert p.report(format="json")["findings"][0]["line"] == step_line


def test_cli_exit_codes_and_script_args(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["probe", str(tmp_path / "missing.py")])
    assert r.exit_code == 2 and "no such script" in r.output
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nraise ValueError('data file not found')\n")
    r = runner.invoke(main, ["probe", str(bad)])
    assert r.exit_code == 3
    assert "ValueError: data file not found" in r.output and 'bad.py", line 2' in r.output
    argv = tmp_path / "argv.py"
    argv.write_text(
        "import sys, torch\nassert sys.argv[1:] == ['--lr', '0.5', '--steps', '9'], sys.argv\n"
        "m = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=float(sys.argv[2]))\n"
        "for _ in range(int(sys.argv[4])):\n    opt.zero_grad()\n    m(torch.randn(3, 2)).sum().backward()\n"
        "    opt.step()\n")
    r = runner.invoke(main, ["probe", str(argv), "--lr", "0.5", "--format", "json", "--steps", "2", "--", "--steps",
                             "9"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["steps"] == 2


def test_plot(tmp_path, probed):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        r = CliRunner().invoke(main, ["probe", str(SCRIPTS / "healthy_mlp.py"), "--plot", str(tmp_path / "g.png")])
        assert r.exit_code == 2 and "pip install 'gradfix[plot]'" in r.output
        return
    out = tmp_path / "g.png"
    probed("cut_detach.py").plot(str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_subprocess_json_and_no_torch_at_import():
    """One interpreter: importing gradfix, its CLI and gradfix.probe loads no torch; then `gradfix probe` runs."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = ("import sys, gradfix, gradfix.cli.main, gradfix.probe\n"
            "assert callable(gradfix.probe) and 'torch' not in sys.modules, 'torch imported eagerly'\n"
            "sys.argv = ['gradfix', 'probe', sys.argv[1], '--format', 'json']\n"
            "gradfix.cli.main.main()\n")
    r = subprocess.run([sys.executable, "-c", code, str(SCRIPTS / "seed1_inplace.py")], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 1, r.stderr
    f = json.loads(r.stdout)["findings"][0]
    assert (f["kind"], f["rule"], f["path"]) == ("inplace-on-saved-tensor", "GF101",
                                                 "tests/probe_scripts/seed1_inplace.py")
    assert f["line"] == line_of("seed1_inplace.py", "f /= (f.norm")


def test_norms_group_by_device_dtype_and_layout():
    """The probe's batched norms: one value per tensor, in order, across dtypes and a sparse tensor."""
    from gradfix.probe.numeric import norms

    ts = [torch.randn(3), torch.randn(2, 2).half(), torch.randn(4).to_sparse(), torch.randn(5, dtype=torch.float64)]
    want = [float(t.coalesce().values().norm() if t.is_sparse else t.norm()) for t in ts]  # each in its dtype
    assert norms(ts) == pytest.approx(want, rel=1e-6)
    assert norms([]) == []
