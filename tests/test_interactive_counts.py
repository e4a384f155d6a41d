"""The review session's promises, driven without a terminal: a change refused by verification is
said once and counted once, a change offered again is counted as what finally happened to it, and
a change said to be unacceptable is only offered again with the reason it now can be."""

from __future__ import annotations

import pytest

from gradfix.cli.interactive import _Session
from gradfix.engine import Change, FixResult, Policy
from gradfix.model import Finding, Fix, Safety, Span, Verdict

BEFORE = "h = f(x)\nh /= 2\n"
AFTER = "h = f(x)\nh = h / 2\n"


def change(verdict: Verdict, line: int = 2) -> Change:
    fix = Fix("rewrite as `h = h / 2`", (), Safety.SAFE)
    finding = Finding("GF101", "inplace-on-activation", "in-place `/=` on `h`", Span(line, 1, line, 7), fix)
    return Change("m.py", finding, line, BEFORE, AFTER, verdict=verdict, detail="needs a fixture")


@pytest.fixture
def session(capsys):
    s = _Session(Policy(), color=False)
    answers = []
    s.ask = lambda: answers.pop(0)
    s.answers = answers
    return s


def test_refused_change_is_said_once_and_counted_once(session, capsys):
    first = change(Verdict.UNTESTABLE)
    assert session.decide([first]).accept == [False]
    out = capsys.readouterr().out
    assert out.count("untestable: pass --allow-untestable") == 1
    again = change(Verdict.UNTESTABLE)      # the engine verified it again next round
    assert session.decide([again]).accept == [False]
    assert capsys.readouterr().out == ""
    result = FixResult("m.py", BEFORE, BEFORE, changes=[again])
    assert session.counts(result) == {"applied": 0, "skipped": 0, "refused": 1, "unreviewed": 0}


def test_refused_then_verified_is_offered_with_the_reason(session, capsys):
    session.decide([change(Verdict.UNTESTABLE)])
    capsys.readouterr()
    now = change(Verdict.EQUIVALENT)
    session.answers.append("y")
    assert session.decide([now]).accept == [True]
    assert "verified again after the changes accepted above" in capsys.readouterr().out
    now.applied = True
    assert session.counts(FixResult("m.py", BEFORE, AFTER, changes=[now])) == {
        "applied": 1, "skipped": 0, "refused": 0, "unreviewed": 0}


def test_an_answer_given_twice_counts_once(session):
    # accepted, not applied this round (it overlapped another change), offered and accepted again
    session.answers.extend(["y", "y"])
    first, second = change(Verdict.EQUIVALENT), change(Verdict.EQUIVALENT)
    assert session.decide([first]).accept == [True]
    assert session.decide([second]).accept == [True]
    second.applied = True
    assert session.counts(FixResult("m.py", BEFORE, AFTER, changes=[second])) == {
        "applied": 1, "skipped": 0, "refused": 0, "unreviewed": 0}


def test_apply_all_in_file_never_takes_a_refused_change(session):
    session.answers.append("a")
    ok, bad = change(Verdict.EQUIVALENT, 2), change(Verdict.FAILED, 3)
    later = change(Verdict.EQUIVALENT, 4)
    assert session.decide([ok, bad, later]).accept == [True, False, True]
    assert bad.reason.startswith("verification failed")
