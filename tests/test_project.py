"""The project index: facts one file needs from the others of the run (analysis/project.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradfix.analysis.project import ProjectIndex
from gradfix.analysis.summary import module_names, resolve_relative
from gradfix.codemods import ALL_RULES
from gradfix.config import Config
from gradfix.engine import Engine
from gradfix.runner import lint_paths

NETS = '''\
import torch.nn as nn


class Backbone(nn.Module):
    pass


class Classifier(Backbone):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(x)

    def render(self, x):
        pic = self.head(x).sigmoid()
        pic.mul_(255)
        return pic


class Settings:
    def forward(self, x):
        return x
'''

TRAIN = '''\
import torch
from nets import Classifier
from nets.layers import Settings

net = Classifier()
settings = Settings()
opt = torch.optim.Adam(net.parameters())
for batch in [torch.randn(4, 8)]:
    logits = net.forward(batch)
    same = settings.forward(batch)
    opt.zero_grad()
    logits.sum().backward()
    opt.step()
with torch.no_grad():
    shown = net.render(torch.randn(2, 8))
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def project(tmp_path):
    return write(tmp_path, {"nets/__init__.py": "from .layers import Classifier\n", "nets/layers.py": NETS,
                            "train.py": TRAIN})


def findings(root: Path, monkeypatch, *paths: str) -> list[tuple[str, int, str]]:
    monkeypatch.chdir(root)
    config = Config(root=str(root))
    report = lint_paths(Engine(ALL_RULES, config), list(paths) or ["."], config)
    return sorted((Path(lint.path).as_posix(), f.span.line, f.rule) for lint in report.lints for f in lint.findings)


def test_module_names_cover_package_and_script_imports(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/mod.py": "", "tools/run.py": ""})
    assert module_names(str(tmp_path / "pkg/sub/mod.py"), str(tmp_path)) == ("pkg.sub.mod", "sub.mod", "mod")
    assert module_names(str(tmp_path / "pkg/sub/__init__.py"), str(tmp_path))[0] == "pkg.sub"
    assert "run" in module_names(str(tmp_path / "tools/run.py"), str(tmp_path))
    assert resolve_relative("b", 1, "p.q") == "p.q.b"
    assert resolve_relative("b", 2, "p.q") == "p.b"
    assert resolve_relative(None, 2, "p.q") == "p"
    assert resolve_relative("b", 3, "p.q") is None  # climbs out of the package
    assert resolve_relative("b", 1, None) is None


def test_module_classes_are_followed_across_files_and_reexports(project):
    files = {str(p): p.read_text() for p in project.rglob("*.py")}
    index = ProjectIndex.build(files, str(project))
    view = index.view(str(project / "train.py"))
    assert view.is_module_class("nets.Classifier") is True          # re-exported by the package
    assert view.is_module_class("nets.layers.Classifier") is True   # through a base of the same file
    assert view.is_module_class("nets.layers.Settings") is False    # a plain class
    assert view.is_module_class("torchvision.models.resnet18") is None  # not the project's


def test_a_base_class_the_index_cannot_see_is_unknown(tmp_path):
    write(tmp_path, {"a.py": "from somewhere import Thing\n\nclass A(Thing):\n    pass\n"})
    index = ProjectIndex.build({str(tmp_path / "a.py"): (tmp_path / "a.py").read_text()}, str(tmp_path))
    assert index.view(str(tmp_path / "b.py")).is_module_class("a.A") is None


def test_two_files_with_one_module_name_are_ambiguous(tmp_path):
    write(tmp_path, {"exp1/model.py": NETS, "exp2/model.py": "class Classifier:\n    pass\n",
                     "exp1/train.py": "", "main.py": ""})
    files = {str(p): p.read_text() for p in tmp_path.rglob("*.py")}
    index = ProjectIndex.build(files, str(tmp_path))
    # a script imports its own folder's model.py: the one next to it
    assert index.view(str(tmp_path / "exp1/train.py")).is_module_class("model.Classifier") is True
    # from the top, `model` could be either file: unknown, so no rule relies on it
    assert index.view(str(tmp_path / "main.py")).is_module_class("model.Classifier") is None


def test_call_sites_in_other_files_and_their_grad_mode(project):
    files = {str(p): p.read_text() for p in project.rglob("*.py")}
    index = ProjectIndex.build(files, str(project))
    layers = str(project / "nets/layers.py")
    sites = index.sites_of(layers, "Classifier.render")
    assert [(Path(p).name, s.no_grad) for p, s in sites] == [("train.py", True)]
    assert index.view(layers).callers_grad("Classifier.render", lambda name: False) is False
    assert index.view(layers).callers_grad("Classifier.forward", lambda name: False) is True  # net.forward(batch)
    assert index.view(layers).callers_grad("Settings.forward", lambda name: False) is True  # settings.forward(batch)
    assert index.view(layers).callers_grad("Classifier.__init__", lambda name: False) is None  # no call resolves to it


def test_update_changes_the_answers(project):
    files = {str(p): p.read_text() for p in project.rglob("*.py")}
    index = ProjectIndex.build(files, str(project))
    view = index.view(str(project / "train.py"))
    assert view.is_module_class("nets.layers.Settings") is False
    index.update(str(project / "nets/layers.py"), NETS.replace("class Settings:", "class Settings(nn.Module):"))
    assert view.is_module_class("nets.layers.Settings") is True
    index.update(str(project / "nets/layers.py"), "def broken(:\n")
    assert view.is_module_class("nets.layers.Settings") is None  # the file no longer parses: it left the index


def test_rules_use_the_project(project, monkeypatch):
    got = findings(project, monkeypatch)
    # the imported Classifier is a module: calling forward() skips its hooks
    assert ("train.py", 9, "GF305") in got
    # Settings is a plain class of another file: settings.forward() is an ordinary method
    assert not [f for f in got if f[1] == 10]
    # render() is called only under no_grad in train.py: the in-place mul_ on its sigmoid output is harmless
    assert not [f for f in got if f[0] == "nets/layers.py"]


def test_without_the_other_files_the_rules_know_less(project, monkeypatch):
    # checked alone, layers.py cannot know render() only runs under no_grad
    assert ("nets/layers.py", 18, "GF101") in findings(project, monkeypatch, "nets/layers.py")
    # and train.py alone cannot know Classifier is a module: silence, not a guess
    assert findings(project, monkeypatch, "train.py") == []


def test_relative_imports_resolve_inside_a_package(tmp_path, monkeypatch):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/nets.py": NETS,
                     "pkg/loop.py": "import torch\nfrom .nets import Classifier\n\n\ndef run(x):\n"
                                    "    net = Classifier()\n    return net.forward(x)\n"})
    assert ("pkg/loop.py", 7, "GF305") in findings(tmp_path, monkeypatch)


def test_cli_check_reads_the_project(project):
    out = subprocess.run([sys.executable, "-m", "gradfix", "check", "--format", "json", "."], cwd=project,
                         capture_output=True, text=True)
    data = json.loads(out.stdout)
    rows = data if isinstance(data, list) else data.get("findings", [])
    assert {(Path(r["path"]).name, r["rule"]) for r in rows} == {("train.py", "GF305")}


WRAPPERS = '''\
import torch.nn as nn
import torch.nn.functional as F


class SoftDrop(nn.Module):
    def __init__(self, p, name=None):
        super().__init__()
        self.p = p
        self.name = name

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


class Scaled(SoftDrop):
    def __init__(self, p):
        super().__init__(p)
        self.gain = nn.Parameter(torch.ones(1))


class Codebook(nn.Module):
    def __init__(self, dim, size):
        super().__init__()
        self.codes = torch.randn(dim, size)
        self.counts = torch.zeros(size)
        self.mean = torch.clone(self.codes).cuda()

    def forward(self, x):
        return x @ self.codes


class Placed(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner.to("cpu")   # `.to()` of whatever it is handed: may be a module
'''

STACK = '''\
import torch.nn as nn
from wrappers import SoftDrop, Scaled


class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.drops = []
        self.gains = []
        for _ in range(n):
            self.drops.append(SoftDrop(0.1))
            self.gains.append(Scaled(0.1))

    def forward(self, x):
        for d, g in zip(self.drops, self.gains):
            x = g(d(x))
        return x
'''


def test_parameter_free_classes_across_files(tmp_path, monkeypatch):
    write(tmp_path, {"wrappers.py": WRAPPERS, "stack.py": STACK})
    files = {str(p): p.read_text() for p in tmp_path.rglob("*.py")}
    view = ProjectIndex.build(files, str(tmp_path)).view(str(tmp_path / "stack.py"))
    assert view.parameter_free("wrappers.SoftDrop") is True
    assert view.parameter_free("wrappers.Scaled") is False  # its own nn.Parameter
    assert view.parameter_free("torch.nn.Linear") is None   # not the project's: the torch tables decide
    # plain tensors (`torch.randn`, `torch.clone(...)`, placed) register nothing; `.to()` of a parameter may
    assert view.parameter_free("wrappers.Codebook") is True
    assert view.parameter_free("wrappers.Placed") is False
    # GF304: a plain list of a parameter-free module has nothing to register; one with parameters does
    got = findings(tmp_path, monkeypatch)
    assert [(p, line) for p, line, rule in got if rule == "GF304"] == [("stack.py", 9)]


def test_the_language_server_reads_a_documents_folder_once_and_refreshes_the_document(tmp_path):
    from gradfix.cli.lsp import _refresh_project

    write(tmp_path, {"nets.py": NETS, "train.py": TRAIN})
    index = ProjectIndex(str(tmp_path))
    _refresh_project(index, str(tmp_path / "train.py"), TRAIN)
    view = index.view(str(tmp_path / "train.py"))
    assert view.is_module_class("nets.Classifier") is True  # the sibling was read from disk
    # the unsaved buffer wins over the file on disk, for the document itself
    edited = NETS.replace("class Settings:", "class Settings(nn.Module):")
    _refresh_project(index, str(tmp_path / "nets.py"), edited)
    assert view.is_module_class("nets.Settings") is True
    (tmp_path / "nets.py").write_text(NETS)
    _refresh_project(index, str(tmp_path / "train.py"), TRAIN)  # the folder is not read again
    assert view.is_module_class("nets.Settings") is True
