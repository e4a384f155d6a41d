"""GF209 in notebooks: a cell's last bare expression is displayed by Jupyter, so its value is not discarded."""

from __future__ import annotations

import json

import nbformat
from click.testing import CliRunner

from gradfix.cli.main import main


def test_cell_output_is_not_a_discarded_result(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook()
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("import torch\nt = torch.arange(6.0)"),
        nbformat.v4.new_markdown_cell("Reshape it:"),
        nbformat.v4.new_code_cell("t.view(3, 2)"),                      # shown: left alone
        nbformat.v4.new_code_cell("t.reshape(2, 3)\n# the value shows\n"),  # shown: left alone
        nbformat.v4.new_code_cell("t.view(2, 3);"),                     # `;` hides it: discarded
        nbformat.v4.new_code_cell("t.view(3, 2)\nprint(t.shape)"),      # not last: discarded
    ]
    nbformat.write(nb, str(tmp_path / "demo.ipynb"))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", "--select", "GF209", "demo.ipynb"],
                           catch_exceptions=False)
    got = sorted((f["cell"], f["line"]) for f in json.loads(r.stdout)["findings"])
    assert got == [(5, 1), (6, 1)]
