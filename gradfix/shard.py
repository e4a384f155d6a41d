"""`check --shard i/n`: one CI job's share of a run, and the merge of the shards' reports.

A file's shard is a hash of its displayed path, so it depends on nothing else (adding a file
moves no other) and every machine computes the same split. Every shard still builds the
project facts from all files, so a file's findings are those of the unsharded run; merged
JSON or SARIF reports equal the unsharded report up to order (findings are sorted by path).
"""

from __future__ import annotations

import hashlib
import json

import click


def parse(text: str) -> tuple[int, int]:
    """"2/4" -> (2, 4): the second of four shards, counted from 1."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise click.BadParameter(f"expected I/N (such as 1/4), got {text!r}") from None
    if not (n >= 1 and 1 <= i <= n):
        raise click.BadParameter(f"expected 1 <= I <= N, got {text!r}")
    return i, n


def owns(path: str, shard: tuple[int, int]) -> bool:
    i, n = shard
    key = path.replace("\\", "/").encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % n == i - 1


def merge(texts: list[str]) -> str:
    """One report from the shards' JSON (`--output-format json`) or SARIF reports."""
    docs = [json.loads(t) for t in texts]
    if all("runs" in d for d in docs):
        out = docs[0]
        run = out["runs"][0]
        for d in docs[1:]:
            other = d["runs"][0]
            run["results"].extend(other.get("results", []))
            for a, b in zip(run.get("invocations", []), other.get("invocations", [])):
                a["executionSuccessful"] = a.get("executionSuccessful", True) and b.get("executionSuccessful", True)
                a.setdefault("toolExecutionNotifications", []).extend(b.get("toolExecutionNotifications", []))
        run["results"].sort(key=_sarif_key)
        return json.dumps(out, indent=2) + "\n"
    if all("findings" in d for d in docs):
        findings = sorted((f for d in docs for f in d["findings"]),
                          key=lambda f: (f["path"], f["line"], f["column"], f["rule"]))
        errors = sorted((e for d in docs for e in d.get("errors", [])), key=lambda e: json.dumps(e, sort_keys=True))
        return json.dumps({"findings": findings, "errors": errors}, indent=2) + "\n"
    raise click.UsageError("merge reads reports of one format: all JSON (--output-format json) or all SARIF")


def _sarif_key(result: dict):
    loc = (result.get("locations") or [{}])[0].get("physicalLocation", {})
    region = loc.get("region", {})
    return (loc.get("artifactLocation", {}).get("uri", ""), region.get("startLine", 0),
            region.get("startColumn", 0), result.get("ruleId", ""))
