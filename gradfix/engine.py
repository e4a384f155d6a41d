"""The pipeline: parse -> match -> rewrite -> verify -> decide -> (caller) emit.

Every front end calls this module: `check` uses `lint_source`, `apply`, the
interactive review and the LSP use `fix_source` with their own `decide`.
Fixes are applied to a fixpoint (bounded); a fix whose output does not parse is
dropped and reported; a change rejected once is not offered again.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
from dataclasses import dataclass, field
from typing import Callable, Sequence

import libcst as cst

from gradfix import suppression
from gradfix.analysis import FileIndex, prepass, tree
from gradfix.config import Config, selects
from gradfix.diffing import line_map
from gradfix.model import FileError, Finding, Fix, Safety, Verdict
from gradfix.parsing import OPERATIONS, ParseFailure, _compiles, _cst_tree, _parses, _python_tree, parse_both
from gradfix.rewriting import _Claims, _overlaps, _parses_locally, apply_fixes
from gradfix.rule import Rule, RuleContext

MAX_ROUNDS = 10
LARGE_FILE = 400_000  # characters: `check` parses larger files a statement at a time (memory)
# applied by default; CHANGES_BEHAVIOUR only with --unsafe-fixes (or accepted in `apply -i`)
APPLIED_VERDICTS = (Verdict.EQUIVALENT, Verdict.FIXES_CRASH, Verdict.FIXES_HAZARD)


@dataclass
class Change:
    """One proposed rewrite, alone against the source of its round."""

    path: str
    finding: Finding
    line: int                      # 1-based line of the finding in the ORIGINAL file
    before: str                    # source the fix applies to
    after: str                     # source with only this fix applied
    verdict: Verdict = Verdict.NOT_VERIFIED
    detail: str = ""
    unit: str | None = None
    applied: bool = False
    reason: str = ""               # why it was not applied
    together: tuple = ()           # verified only combined with these changes (same unit): applied with them

    # `after` may be built on first read (fix_source checks a fix on its own statement and
    # builds the whole text only for a verifier or a reviewer that asks for it)
    _after: str | None = field(default=None, init=False, repr=False, compare=False)
    _make_after: Callable[[], str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def rule(self) -> str:
        return self.finding.rule

    @property
    def fix(self) -> Fix:
        assert self.finding.fix is not None
        return self.finding.fix


def _get_after(change: Change) -> str:
    if change._after is None and change._make_after is not None:
        change._after, change._make_after = change._make_after(), None
    return change._after


def _set_after(change: Change, value: str | None) -> None:
    change._after = value


Change.after = property(_get_after, _set_after)  # type: ignore[assignment]


@dataclass
class FixResult:
    path: str
    original: str
    fixed: str
    changes: list[Change] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)     # what remains in `fixed`
    errors: list[FileError] = field(default_factory=list)
    stopped: bool = False                                       # the user quit


@dataclass(frozen=True)
class Policy:
    """Which changes `apply` takes without asking (the verdict decides when verification ran)."""

    unsafe_fixes: bool = False
    allow_untestable: bool = False

    def accepts(self, change: Change) -> tuple[bool, str]:
        v = change.verdict
        if v is Verdict.NOT_VERIFIED:
            if change.fix.safety is Safety.SAFE or self.unsafe_fixes:
                return True, ""
            return False, "unsafe fix not verified (--no-verify): pass --unsafe-fixes to apply"
        if v in APPLIED_VERDICTS:
            return True, ""
        if v is Verdict.CHANGES_BEHAVIOUR:
            if self.unsafe_fixes:
                return True, ""
            return False, f"changes behaviour, no hazard shown: {change.detail} (pass --unsafe-fixes to apply)"
        if v is Verdict.UNTESTABLE:
            if self.allow_untestable:
                return True, ""
            return False, f"untestable: {change.detail} (pass --allow-untestable to apply)"
        return False, f"verification failed: {change.detail}"


Decide = Callable[[list[Change]], "Decision"]


@dataclass
class Decision:
    accept: list[bool]
    stop: bool = False


@contextlib.contextmanager
def gc_paused():
    """Keep the cyclic collector out of an analysis: a file's trees are tens of thousands of
    objects, and a collection in the middle doubled the slowest lint of a 2,000-line file.
    The garbage is collected after (the LSP does it once diagnostics are out)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Engine:
    def __init__(self, rules: Sequence[type[Rule]], config: Config | None = None):
        self.config = config or Config()
        self.rules = [r(self.config.options_for(r.id)) for r in rules if self.config.enabled(r.id)]
        # the run's other files (analysis/project.py), set by the front end that knows them
        self.project = None
        # path -> (text, ids of the rules that may match it, the file's own factories: its summary's),
        # from the parse that summarised the file for the project (gradfix/prescan.py); used only
        # while the text is the same
        self.rule_hints: dict[str, tuple[str, tuple[str, ...], dict]] = {}

    @property
    def fingerprint(self) -> str:
        """The rules in force, their options and the per-file ignores (a results-cache key part;
        the file's path is another)."""
        import json

        return json.dumps([[(r.id, sorted(r.options.items())) for r in self.rules],
                           sorted(self.config.per_file_ignores.items())], default=repr)

    # -- match -----------------------------------------------------------
    def rules_for(self, py_tree: ast.Module, source: str, path: str = "") -> list[Rule]:
        """The rules that may match this file (analysis/prepass.py): the others' necessary
        condition is false on its `ast`, so they could report nothing in it."""
        return prepass.rules_for(self.rules, py_tree, source, path)

    def _findings(self, module: cst.Module, source: str, path: str, py_tree: ast.Module | None = None,
                  tables: tuple[dict, dict] | None = None, reuse=None,
                  errors: list[FileError] | None = None, parents_out: list | None = None,
                  rules: list[Rule] | None = None, factories: dict | None = None) -> list[Finding]:
        if rules is None:
            rules = self.rules if py_tree is None else self.rules_for(py_tree, source, path)
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        view = self.project.view(path) if self.project is not None else None
        index = FileIndex(wrapper, source, py_tree, tables, reuse, view, factories)
        if parents_out is not None:
            parents_out.append(index.parents)
        found: list[Finding] = []
        try:
            with tree.active(index.children, index.preorder):
                for rule in rules:
                    try:
                        found.extend(list(rule.check(RuleContext(index, path, rule))))
                    except RecursionError:
                        raise
                    except Exception as exc:  # a bug in one rule must not cost the file its other findings
                        if errors is not None:
                            errors.append(FileError(path, None, f"internal error in {rule.id} ({type(exc).__name__}: "
                                                                f"{exc}); the other rules ran"))
            index.keep_flows()
        finally:
            index.release()
        if found and self.config.per_file_ignores:
            off = self.config.ignored_in(path)
            found = [f for f in found if not any(selects(s, f.rule) for s in off)]
        if found:
            # comments are read only when there is something to suppress
            table = reuse.suppressions() if reuse is not None else suppression.suppressions(source)
            found = [f for f in found if not suppression.is_suppressed(table, f.rule, f.span.line, f.span.end_line)]
        found.sort(key=lambda f: (f.span.line, f.span.column, f.rule))
        return _dedupe(found)

    def lint_source(self, source: str, path: str, incremental=None) -> tuple[list[Finding], list[FileError]]:
        """Findings of one file. `incremental` (an IncrementalParser kept per open document)
        re-parses only the top-level statements that changed since its previous call."""
        with gc_paused():
            return self._lint_source(source, path, incremental)

    def _lint_source(self, source: str, path: str, incremental=None) -> tuple[list[Finding], list[FileError]]:
        tables = None
        if incremental is None and len(source) > LARGE_FILE:
            # libcst's parser peaks at ~15x the tree it returns (440 MB for 30,000 lines):
            # one top-level statement at a time, as the language server parses edits
            from gradfix.incremental import IncrementalParser

            incremental = IncrementalParser()
        hint = self.rule_hints.get(path)
        if hint is not None and hint[0] == source and not hint[1]:
            return [], []  # the pre-pass ran where the file was summarised: no rule may match, it parses
        factories = None
        try:
            if hint is not None and hint[0] == source and incremental is None:
                # the file parsed with CPython where it was summarised (so libcst's parser cannot crash on
                # nesting too deep for CPython's): its tree is parsed again only if positions need it
                # (FileIndex._ast_body, lazily), which a file without findings seldom does
                py_tree = None
                rules = [r for r in self.rules if r.id in hint[1]]
                factories = hint[2]
            else:
                py_tree = _python_tree(source)
                if hint is not None and hint[0] == source:
                    rules = [r for r in self.rules if r.id in hint[1]]
                else:
                    rules = self.rules_for(py_tree, source, path)
            if not rules:
                return [], []  # no rule may match: libcst's parse and the analysis are not needed
            parsed = incremental.parse(source, py_tree) if incremental is not None else None
            if parsed is not None:
                module, children, parents, spans = parsed
                tables = (children, parents, spans)
            else:
                # a hint means `check` (gradfix/prescan.py), one file at a time in its process: its tree is only
                # read, so libcst's per-node validation is skipped (parsing._unvalidated: the same tree)
                module = _cst_tree(source, validate=hint is None or hint[0] != source)
        except ParseFailure as exc:
            return [], [FileError(path, exc.line, str(exc))]
        try:
            errors: list[FileError] = []
            return self._findings(module, source, path, py_tree, tables, incremental if tables else None,
                                  errors, rules=rules, factories=factories), errors
        except RecursionError:
            return [], [FileError(path, None, "file too deeply nested to analyse")]

    def proposals(self, source: str, path: str) -> tuple[list[tuple[Finding, str | None]], list[FileError]]:
        """Every finding with the whole text after applying its fix alone (None when it has no
        fix or the fix would not parse). For editors: quick fixes are diffs of these texts."""
        try:
            module, py_tree = parse_both(source, path)
        except ParseFailure as exc:
            return [], [FileError(path, exc.line, str(exc))]
        out: list[tuple[Finding, str | None]] = []
        strict = _compiles(source)
        errors: list[FileError] = []
        for f in self._findings(module, source, path, py_tree, errors=errors):
            after = None
            if f.fix is not None:
                after = apply_fixes(module, [f.fix])
                if _parses(after, strict) is not None:
                    after = None
            out.append((f, after))
        return out, errors

    # -- rewrite, verify, decide -----------------------------------------
    def fix_source(self, source: str, path: str, decide: Decide, verifier=None, project_root: str | None = None) -> FixResult:
        with gc_paused():   # as lint_source: two rounds' trees are alive at once here
            return self._fix_source(source, path, decide, verifier, project_root)

    def _fix_source(self, source: str, path: str, decide: Decide, verifier, project_root: str | None) -> FixResult:
        result = FixResult(path=path, original=source, fixed=source)
        rejected: set[tuple] = set()
        deferred: set[tuple] = set()
        current = source
        strict = _compiles(source)
        trees: list = []     # the combined output's trees, parsed when it was checked
        for _round in range(MAX_ROUNDS):
            if trees:
                module, py_tree = trees
                trees = []
            else:
                OPERATIONS["round_parses"] += 1
                try:
                    module, py_tree = parse_both(current, path)
                except ParseFailure as exc:
                    result.errors.append(FileError(path, exc.line, str(exc)))
                    return result
            round_errors: list[FileError] = []
            parents: list = []
            OPERATIONS["analyses"] += 1
            findings = self._findings(module, current, path, py_tree, errors=round_errors, parents_out=parents)
            for e in round_errors:
                if e.message not in {x.message for x in result.errors}:
                    result.errors.append(e)
            mapping = None  # built at the first fix (a round without one needs no line map)
            if verifier is not None and _round == 0 and any(f.fix is not None for f in findings):
                start = getattr(verifier, "start", None)
                if start is not None:
                    start(wait=False)  # workers import torch while the fixes are rendered
            candidates: list[Change] = []
            for f in findings:
                if f.fix is None:
                    continue
                if mapping is None and current is not source:
                    mapping = line_map(source, current)
                line = mapping.get(f.span.line, f.span.line) if mapping is not None else f.span.line
                key = (f.rule, line, tuple(module.code_for_node(e.node) for e in f.fix.edits))
                if key in rejected:
                    continue
                change = Change(path, f, line, current, None)
                if _parses_locally(module, f.fix, parents[0], strict):
                    # the whole text with only this fix is built if a verifier or reviewer reads it
                    change._make_after = functools.partial(apply_fixes, module, [f.fix], parents[0])
                else:
                    change.after = apply_fixes(module, [f.fix], parents[0])
                    problem = _parses(change.after, strict)
                    if problem is not None:
                        rejected.add(key)
                        result.errors.append(FileError(path, line, f"{f.rule} fix dropped: its output does not parse ({problem})"))
                        continue
                candidates.append(change)
            if not candidates:
                result.findings = findings
                break
            if verifier is not None:
                self._verify(candidates, verifier, project_root)
                self._verify_together(module, candidates, verifier, project_root, strict)
            decision = decide(candidates)
            _drop_partial_groups(candidates, decision)
            accepted: list[Change] = []
            claims = _Claims(parents[0])
            others_taken = any(decision.accept) and not decision.stop
            for change, ok in zip(candidates, decision.accept):
                key = (change.rule, change.line, tuple(module.code_for_node(e.node) for e in change.fix.edits))
                if (not ok and change.verdict in (Verdict.UNTESTABLE, Verdict.FAILED) and others_taken
                        and key not in deferred):
                    # a verdict holds for this round's source: another change taken now (a crash fixed)
                    # may make this one testable, so it is verified again next round
                    deferred.add(key)
                    continue
                if not ok:
                    rejected.add(key)
                    if not change.reason:
                        change.reason = "rejected"
                    result.changes.append(change)
                    continue
                if claims.overlaps(change):
                    continue  # offered again next round, against the new source
                claims.take(change)
                accepted.append(change)
            if accepted:
                new = apply_fixes(module, [c.fix for c in accepted], parents[0])
                problem = _parses(new, strict, trees)
                if problem is not None:
                    # a fix that passed on its own statement but not in the file: check each
                    # alone against the whole file, as before the local check, and drop those
                    kept = []
                    for c in accepted:
                        alone = _parses(c.after, strict)
                        if alone is None:
                            kept.append(c)
                            continue
                        rejected.add((c.rule, c.line, tuple(module.code_for_node(e.node) for e in c.fix.edits)))
                        result.errors.append(FileError(path, c.line, f"{c.rule} fix dropped: its output does not parse ({alone})"))
                    if len(kept) < len(accepted):
                        accepted = kept
                        new = apply_fixes(module, [c.fix for c in accepted], parents[0]) if kept else current
                        problem = _parses(new, strict, trees) if kept else None
                if problem is not None or not accepted:
                    trees = []
                if problem is not None:
                    for c in accepted:
                        c.reason = f"combined output does not parse ({problem})"
                        result.changes.append(c)
                        rejected.add((c.rule, c.line, tuple(module.code_for_node(e.node) for e in c.fix.edits)))
                    accepted = []
                else:
                    for c in accepted:
                        c.applied = True
                        result.changes.append(c)
                    current = new
            if decision.stop:
                result.stopped = True
                result.findings = self.lint_source(current, path)[0]
                break
            if not accepted and all(not ok for ok in decision.accept):
                result.findings = findings
                break
        else:
            result.errors.append(FileError(path, None, f"fixes did not converge after {MAX_ROUNDS} rounds"))
            result.findings = self.lint_source(current, path)[0]
        result.fixed = current
        result.changes.sort(key=lambda c: (c.line, c.rule))
        return result

    def _verify(self, changes: list[Change], verifier, project_root: str | None) -> None:
        from gradfix.verify import VerifyRequest

        requests = [
            VerifyRequest(path=c.path, original=c.before, rewritten=c.after, rule=c.rule, line=c.finding.span.line,
                          contract=self._contract_for(c.fix.contract, c.after, c.path), project_root=project_root)
            for c in changes
        ]
        for change, res in zip(changes, verifier.verify_many(requests)):
            change.verdict = Verdict(res.verdict)
            change.detail = res.detail
            change.unit = res.unit


    def _contract_for(self, contract: dict, rewritten: str, path: str) -> dict:
        """The fix's contract as sent to the verifier: for a training loop, with the rewrite read with the
        project's other files too (analysis/loopedits.py)."""
        if self.project is None or len(self.project) < 2:
            return dict(contract)  # no other file to change the reading: the worker's own reading is the rule's
        from gradfix.analysis.loopedits import with_rewritten_reading

        return with_rewritten_reading(dict(contract), rewritten, self.project.view(path))

    def _verify_together(self, module: cst.Module, changes: list[Change], verifier, project_root: str | None,
                         strict: bool) -> None:
        """Changes to one unit (a training loop, a module) are also verified combined: each alone is
        compared while the unit's other hazards are still in it, which refuses right fixes. The
        combination holds all of the unit's changes; only those refused alone take its verdict."""
        from gradfix.verify import VerifyRequest

        groups: dict[tuple, list[Change]] = {}
        for c in changes:
            key = _unit_key(c)
            if key is not None:
                groups.setdefault(key, []).append(c)
        jobs: list[tuple[list[Change], str, dict]] = []
        for members in groups.values():
            # only when two or more are refused alone: a single refused change is verified again next
            # round, after the others are applied (its hazard may be gone with theirs)
            if sum(1 for c in members if c.verdict not in APPLIED_VERDICTS) < 2:
                continue
            if any(_overlaps(a, b) for i, a in enumerate(members) for b in members[i + 1:]):
                continue
            statements = [c for c in members if c.fix.contract.get("statement")]
            if len(statements) > 1:
                continue
            after = apply_fixes(module, [c.fix for c in members])
            if _parses(after, strict) is not None:
                continue
            base = statements[0] if statements else members[0]
            jobs.append((members, after, dict(base.fix.contract)))
        if not jobs:
            return
        requests = [VerifyRequest(path=m[0].path, original=m[0].before, rewritten=after, rule="+".join(c.rule for c in m),
                                  line=m[0].finding.span.line, contract=self._contract_for(contract, after, m[0].path),
                                  project_root=project_root)
                    for m, after, contract in jobs]
        for (members, _after, _c), res in zip(jobs, verifier.verify_many(requests)):
            combined = Verdict(res.verdict)
            if combined not in APPLIED_VERDICTS and combined is not Verdict.CHANGES_BEHAVIOUR:
                continue
            group = tuple(id(c) for c in members)
            for c in members:
                if _preference(c.verdict) >= _preference(combined):
                    continue
                others = ", ".join(f"{o.rule} (line {o.line})" for o in members if o is not c)
                c.verdict = combined
                c.detail = f"verified together with {others}, the other changes to this unit: {res.detail}"
                c.unit = res.unit or c.unit
                c.together = group


def _unit_key(c: Change) -> tuple | None:
    kind = c.fix.contract.get("kind")
    if kind == "train-loop" and c.fix.contract.get("loop"):
        loop = c.fix.contract["loop"]
        return ("loop", str(loop.get("scope")), str(loop.get("ordinal")))
    if kind == "equal" and c.unit:
        return ("unit", c.unit)
    return None


def _preference(v: Verdict) -> int:
    if v in APPLIED_VERDICTS:
        return 2
    return 1 if v is Verdict.CHANGES_BEHAVIOUR else 0


def _drop_partial_groups(changes: list[Change], decision: "Decision") -> None:
    """A change verified only together with others is applied only with all of them."""
    by_id = {id(c): i for i, c in enumerate(changes)}
    changed = True
    while changed:
        changed = False
        for i, c in enumerate(changes):
            if not c.together or not decision.accept[i]:
                continue
            if not all(decision.accept[by_id[m]] for m in c.together if m in by_id):
                decision.accept[i] = False
                c.reason = "verified only together with the other changes to its unit, not all of which were taken"
                changed = True


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    out = []
    for f in findings:
        key = (f.rule, f.span)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def accept_all(changes: list[Change]) -> Decision:
    return Decision([True] * len(changes))


def policy_decider(policy: Policy) -> Decide:
    def decide(changes: list[Change]) -> Decision:
        flags = []
        for c in changes:
            ok, reason = policy.accepts(c)
            c.reason = reason
            flags.append(ok)
        return Decision(flags)

    return decide
