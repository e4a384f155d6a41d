"""`check --shard i/n` and `gradfix merge`: the shards split the files by path, each file in
exactly one, and the merged reports are the unsharded report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradfix.cli.main import main
from samples import MODEL, TRAIN

GOLDEN = Path(__file__).resolve().parent.parent / "golden"



@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    for p in sorted(GOLDEN.glob("GF1*/pos_*.py"))[:14]:
        if not p.name.endswith(".fixed.py"):
            shutil.copy(p, root / f"{p.parent.name}_{p.name}")
    # a finding that needs another file's facts (Net is a module class: model.py says so)
    (root / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    return root


def run(tree: Path, monkeypatch, *args: str):
    monkeypatch.chdir(tree)
    res = CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", "--exit-zero", *args, "."],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def paths_of(report: dict) -> set[str]:
    return {f["path"] for f in report["findings"]}


def test_shards_partition_the_files_and_merge_to_the_whole_report(tree, monkeypatch, tmp_path):
    whole = run(tree, monkeypatch, "--output-format", "json")
    shards = [run(tree, monkeypatch, "--output-format", "json", "--shard", f"{i}/3") for i in (1, 2, 3)]
    parts = [paths_of(json.loads(s)) for s in shards]
    assert all(parts), "every shard has findings in this tree"
    assert not (parts[0] & parts[1]) and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
    assert "train.py" in paths_of(json.loads(whole))  # the cross-file finding is in its shard too
    for i, s in enumerate(shards):
        (tmp_path / f"s{i}.json").write_text(s)
    merged = CliRunner().invoke(main, ["merge", *(str(tmp_path / f"s{i}.json") for i in range(3))])
    assert merged.exit_code == 0, merged.output

    def norm(text):
        d = json.loads(text)
        return sorted(json.dumps(f, sort_keys=True) for f in d["findings"]), d["errors"]

    assert norm(merged.output) == norm(whole)


def test_sarif_shards_merge_into_one_run(tree, monkeypatch, tmp_path):
    whole = json.loads(run(tree, monkeypatch, "--output-format", "sarif"))
    for i in (1, 2):
        (tmp_path / f"s{i}.sarif").write_text(run(tree, monkeypatch, "--output-format", "sarif", "--shard", f"{i}/2"))
    merged = CliRunner().invoke(main, ["merge", str(tmp_path / "s1.sarif"), str(tmp_path / "s2.sarif")])
    doc = json.loads(merged.output)
    assert len(doc["runs"]) == 1

    def results(d):
        return sorted(json.dumps(r, sort_keys=True) for r in d["runs"][0]["results"])

    assert results(doc) == results(whole) and results(whole)


def test_a_bad_shard_is_a_usage_error(tree, monkeypatch):
    monkeypatch.chdir(tree)
    for bad in ("0/2", "3/2", "x", "1/0"):
        res = CliRunner().invoke(main, ["check", "--shard", bad, "."])
        assert res.exit_code == 2 and "--shard" in res.output, (bad, res.output)
