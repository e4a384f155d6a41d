"""A folder of modules beside a module file of the same name (`nets.py` and `nets/`), with no `__init__.py`: Python
resolves `nets` to the file, so `from nets.small import Tiny` fails. Where the project's .gitignore ignores
`__init__.py`, the author's checkout had one and the folder was the package: the verifier takes it so and says so
(folder_packages.py); without that evidence the import error stands, reported as the project's own."""

from __future__ import annotations

import textwrap

import pytest

from gradfix.verify import VerifyRequest
from gradfix.verify.folder_packages import shadowed_folder

pytest.importorskip("torch")

TINY = textwrap.dedent('''
    import torch.nn as nn


    class Tiny(nn.Module):
        def __init__(self, width=5):
            super().__init__()
            self.proj = nn.Linear(width, 2)

        def forward(self, x):
            return self.proj(x)
''')

STALE = "OLD = 1\n"  # the module file the folder shadowed in the author's checkout

MODEL = textwrap.dedent('''
    import torch

    from models.nets.small import Tiny


    def score(model, x):
        return model.forward(x)


    def main():
        model = Tiny()
        return score(model, torch.zeros(3, 5))
''')


def _project(tmp_path, gitignore: str | None):
    (tmp_path / "models" / "nets").mkdir(parents=True)
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "nets.py").write_text(STALE)
    (tmp_path / "models" / "nets" / "small.py").write_text(TINY)
    (tmp_path / "train.py").write_text(MODEL)
    if gitignore is not None:
        (tmp_path / ".gitignore").write_text(gitignore)


def _request(tmp_path):
    old, new = "model.forward(x)", "model(x)"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Tiny()"}
    return VerifyRequest(path=str(tmp_path / "train.py"), original=MODEL, rewritten=MODEL.replace(old, new),
                         rule="GF305", line=8, contract=contract, project_root=str(tmp_path))


def test_shadowed_folder_is_what_python_sees(tmp_path):
    _project(tmp_path, None)
    hit = shadowed_folder("models.nets", [str(tmp_path / "models")], lambda p: True)
    assert hit == (str(tmp_path / "models" / "nets"), str(tmp_path / "models" / "nets.py"))
    (tmp_path / "models" / "nets" / "__init__.py").write_text("")
    assert shadowed_folder("models.nets", [str(tmp_path / "models")], lambda p: True) is None  # a package wins


def test_folder_is_the_package_when_gitignore_ignores_init(tmp_path, shared_verifier):
    _project(tmp_path, "__pycache__\n__init__.py\n*.pth\n")
    res, = shared_verifier.verify_many([_request(tmp_path)])
    assert res.verdict == "equivalent", res
    assert "models/nets/ was taken as the package `models.nets`" in res.detail, res
    assert "ignores __init__.py" in res.detail, res


def test_without_the_evidence_the_project_own_import_error_stands(tmp_path, shared_verifier):
    _project(tmp_path, "__pycache__\n*.pth\n")
    res, = shared_verifier.verify_many([_request(tmp_path)])
    assert res.verdict == "untestable", res
    assert "is not a package" in res.detail, res
    assert "the project's own import error" in res.detail, res
    assert "nets.py, which shadows the folder nets/" in res.detail, res


def _stale_request(tmp_path, import_line):
    src = MODEL.replace("from models.nets.small import Tiny", import_line)
    (tmp_path / "train.py").write_text(src)
    old, new = "model.forward(x)", "model(x)"
    contract = {"kind": "forward-call", "receiver": "model", "in_class": False, "call_old": old, "call_new": new,
                "setup": "model = Tiny()"}
    return VerifyRequest(path=str(tmp_path / "train.py"), original=src, rewritten=src.replace(old, new),
                         rule="GF305", line=8, contract=contract, project_root=str(tmp_path))


@pytest.mark.parametrize("import_line, said", [
    ("from models import Tiny", "models/__init__.py defines no `Tiny` anywhere at its top level"),
    ("from models.small import Tiny", "the project's package `models` (models/) holds no module `small`"),
])
def test_a_stale_import_of_the_project_is_said_to_be_its_own(tmp_path, import_line, said, shared_verifier):
    _project(tmp_path, None)
    (tmp_path / "models" / "__init__.py").write_text("VERSION = 2\n")
    res, = shared_verifier.verify_many([_stale_request(tmp_path, import_line)])
    assert res.verdict == "untestable", res
    assert said in res.detail, res


def test_a_name_the_module_binds_is_not_called_the_projects_error(tmp_path, shared_verifier):
    _project(tmp_path, None)
    # bound only by module-level code (a loop), which Python runs: not a stale import, whatever the loader did
    (tmp_path / "models" / "__init__.py").write_text("for Tiny in [None]:\n    pass\nraise ImportError('x')\n")
    res, = shared_verifier.verify_many([_stale_request(tmp_path, "from models import Tiny")])
    assert res.verdict == "untestable", res
    assert "the project's own import error" not in res.detail, res


def test_a_name_the_folder_taken_as_the_package_lacks_is_said_so(tmp_path, shared_verifier):
    _project(tmp_path, "__init__.py\n")
    res, = shared_verifier.verify_many([_stale_request(tmp_path, "from models.nets import Tiny")])
    assert res.verdict == "untestable", res
    assert "`models.nets` is the folder taken as the package, whose __init__.py is not in the repository" in res.detail
    assert "models/nets.py beside the folder does not define it either" in res.detail, res
    assert "install the missing package" not in res.detail, res
