"""What call sites in other files pass for a parameter (`CallSite.classes`), and GF208 reading it: a metric
object handed to a trainer from the script that builds it holds no graph, a loss handed the same way does."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from gradfix.analysis.project import ProjectIndex
from gradfix.analysis.summary import summarise
from gradfix.cache import Cache
from gradfix.codemods import ALL_RULES
from gradfix.config import Config
from gradfix.engine import Engine
from gradfix.runner import lint_paths

# a segmentation trainer of our own: `run_epoch` gets the metric through `fit`, which main.py calls
TRAINER = '''\
import torch


def run_epoch(net, batches, criterion, opt, overlap):
    net.train()
    seen, iou_sum = 0.0, 0.0
    for image, mask in batches:
        logits = net(image)
        loss = criterion(logits, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen += loss
        iou_sum += overlap(logits, mask)
    return seen, iou_sum


def fit(net, batches, criterion, opt, overlap, epochs=2):
    for _ in range(epochs):
        run_epoch(net, batches, criterion, opt, overlap)
'''

MAIN = '''\
import torch
from torch import nn
from torchmetrics.classification import MulticlassJaccardIndex

from trainer import fit

net = nn.Conv2d(3, 4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
jaccard = MulticlassJaccardIndex(num_classes=4).to("cpu")
data = [(torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8)))]
fit(net, data, nn.CrossEntropyLoss(), opt, overlap=jaccard)
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text))
    return root


def gf208(root: Path, monkeypatch, *paths: str, cache=None) -> list[tuple[str, int]]:
    monkeypatch.chdir(root)
    config = Config(root=str(root))
    report = lint_paths(Engine(ALL_RULES, config), list(paths) or ["."], config, cache=cache)
    return sorted((Path(lint.path).as_posix(), f.span.line) for lint in report.lints for f in lint.findings
                  if f.rule == "GF208")


def test_call_sites_record_the_classes_of_their_arguments(tmp_path):
    source = textwrap.dedent('''\
        import torchmetrics
        from trainer import fit, fit2

        once = torchmetrics.Accuracy(task="binary").cuda()
        twice = torchmetrics.Recall(task="binary")
        twice = make()
        fit(once, torchmetrics.F1Score(task="binary"), twice, metric=once, other=lambda a, b: a)
        fit2(*extra, torchmetrics.Precision(task="binary"), **more)

        def inner(param):
            fit(param, local := torchmetrics.AUROC(task="binary"))

        class Holder:
            fit(torchmetrics.Accuracy(task="binary"))
        ''')
    s = summarise(str(tmp_path / "main.py"), source, str(tmp_path), ast.parse(source))
    by_line = {site.line: dict(site.classes) for site in s.sites if site.target.startswith("trainer.")}
    # a name bound once to a constructor (through `.cuda()`), a constructor call; not a name bound twice
    # nor a lambda
    assert by_line[7] == {"0": "torchmetrics.Accuracy", "1": "torchmetrics.F1Score", "metric": "torchmetrics.Accuracy"}
    # nothing is known of positions after `*args`, and `**kwargs` names nothing
    assert by_line[8] == {}
    # a parameter may hold anything; a walrus is not a plain constructor argument
    assert by_line[11] == {}
    # class bodies run their calls too
    assert by_line[14] == {"0": "torchmetrics.Accuracy"}


def test_passed_classes_across_files(tmp_path):
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    files = {str(p): p.read_text() for p in tmp_path.glob("*.py")}
    view = ProjectIndex.build(files, str(tmp_path)).view(str(tmp_path / "trainer.py"))
    assert view.passed_classes("fit", 4, "overlap") == ["torchmetrics.classification.MulticlassJaccardIndex"]
    assert view.passed_classes("fit", 2, "criterion") == ["torch.nn.CrossEntropyLoss"]
    assert view.passed_classes("fit", 1, "batches") is None       # a list display: not an instance of a class
    assert view.passed_classes("run_epoch", 4, "overlap") == []   # no other file calls it


def test_metric_object_passed_from_another_file_holds_no_graph(tmp_path, monkeypatch):
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    # `seen += loss` keeps every graph; `iou_sum += overlap(...)` adds a Jaccard index, thresholded by argmax
    assert gf208(tmp_path, monkeypatch) == [("trainer.py", 13)]


def test_a_loss_passed_the_same_way_keeps_the_graph(tmp_path, monkeypatch):
    # an L1 loss handed in for `overlap` is differentiable: its total holds every iteration's graph
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN.replace("overlap=jaccard", "overlap=nn.L1Loss()")})
    assert gf208(tmp_path, monkeypatch) == [("trainer.py", 13), ("trainer.py", 14)]


def test_every_caller_must_pass_a_metric(tmp_path, monkeypatch):
    # a second script passes a callable nothing can name: the metric is not shown for every call
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN, "sweep.py": '''\
        import torch
        from torch import nn
        import trainer

        def soft_dice(p, t):
            return 1 - (p.softmax(1) * t).mean()

        net = nn.Conv2d(3, 4, 1)
        trainer.fit(net, [], nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1), soft_dice)
        '''})
    assert gf208(tmp_path, monkeypatch) == [("trainer.py", 13), ("trainer.py", 14)]
    # and checked without the script that builds the metric, the trainer cannot know what it is handed
    write(tmp_path, {"sweep.py": "x = 1\n"})
    assert gf208(tmp_path, monkeypatch, "trainer.py") == [("trainer.py", 13), ("trainer.py", 14)]


def test_a_same_file_call_that_leaves_the_parameter_unknown(tmp_path, monkeypatch):
    # `fit` also called in trainer.py itself with an unknown callable: not every call passes the metric
    write(tmp_path, {"trainer.py": TRAINER + "\n\ndef smoke(net, opt, fn):\n    fit(net, [], None, opt, fn)\n",
                     "main.py": MAIN})
    assert gf208(tmp_path, monkeypatch) == [("trainer.py", 13), ("trainer.py", 14)]


def test_editing_the_caller_invalidates_the_cached_trainer(tmp_path, monkeypatch):
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    assert gf208(tmp_path, monkeypatch, cache=Cache(str(tmp_path))) == [("trainer.py", 13)]
    # only main.py's text changes: trainer.py's cached result must not be reused
    (tmp_path / "main.py").write_text(MAIN.replace("overlap=jaccard", "overlap=nn.SmoothL1Loss()"))
    assert gf208(tmp_path, monkeypatch, cache=Cache(str(tmp_path))) == [("trainer.py", 13), ("trainer.py", 14)]


def _verified(root: Path, monkeypatch, verifier, *paths: str) -> list[tuple[int, str, str]]:
    """(line, verdict, detail) of the GF208 changes `check --verify` makes in trainer.py, the run's files the project."""
    from gradfix.engine import accept_all
    from gradfix.runner import RunReport, iter_sources, with_project

    monkeypatch.chdir(root)
    config = Config(root=str(root))
    engine = Engine(ALL_RULES, config)
    with_project(engine, list(iter_sources(list(paths), config, RunReport(), None)), config)
    res = engine.fix_source((root / "trainer.py").read_text(), "trainer.py", accept_all, verifier, str(root))
    return [(c.line, c.verdict.value, c.detail) for c in res.changes if c.rule == "GF208"]


def test_the_verdict_of_a_fix_beside_a_metric_total(tmp_path, monkeypatch, shared_verifier):
    write(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    # `seen += loss` is returned to the caller: detached, and proved with the metric total read as the rule
    # read it (alone, the worker would see a second tensor total and refuse a verdict)
    got = _verified(tmp_path, monkeypatch, shared_verifier, ".")
    assert [(line, verdict) for line, verdict, _d in got] == [(13, "equivalent")]
    assert "read with the project's other files" in got[0][2]
    # the same fix checked without main.py: nothing to reconcile, the same verdict
    alone = _verified(tmp_path, monkeypatch, shared_verifier, "trainer.py")
    assert [(line, verdict) for line, verdict, _d in alone] == [(13, "equivalent")]
    assert "read with the project's other files" not in alone[0][2]
