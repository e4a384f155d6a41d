"""`junit`: JUnit XML, one test suite per file, one failed test case per finding.

A file without findings gets one passing case, so CI dashboards count it; a file that could not
be analysed gets a case with an `<error>`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from gradfix.report import Report


def render_junit(report: Report) -> str:
    by_path = defaultdict(list)
    for e in report.entries:
        by_path[e.path].append(e)
    errors = defaultdict(list)
    for err in report.errors:
        errors[err.path].append(err)
    paths = list(dict.fromkeys([*report.files, *by_path, *errors]))
    root = ET.Element("testsuites", name="gradfix")
    total_tests = total_failures = total_errors = 0
    for path in paths:
        entries, errs = by_path.get(path, []), errors.get(path, [])
        suite = ET.SubElement(root, "testsuite", name=path)
        for e in entries:
            f, s = e.finding, e.finding.span
            case = ET.SubElement(suite, "testcase", name=f"{f.rule} ({f.name}) line {s.line} col {s.column}",
                                 classname=path, file=path, line=str(s.line))
            failure = ET.SubElement(case, "failure", message=f.message, type=f.rule)
            failure.text = f"{path}:{s.line}:{s.column}: {f.rule} {f.message}"
        for err in errs:
            case = ET.SubElement(suite, "testcase", name="analysis", classname=path, file=path)
            error = ET.SubElement(case, "error", message=err.message)
            error.text = f"{path}:{err.line or ''}: {err.message}"
        if not entries and not errs:
            ET.SubElement(suite, "testcase", name="No findings", classname=path, file=path)
        tests = max(1, len(entries) + len(errs))
        suite.set("tests", str(tests))
        suite.set("failures", str(len(entries)))
        suite.set("errors", str(len(errs)))
        total_tests += tests
        total_failures += len(entries)
        total_errors += len(errs)
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", str(total_errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
