"""The rules. One module per rule; adding a rule = a module here + its cases in golden/."""

from __future__ import annotations

import importlib
import pkgutil

from gradfix.rule import Rule


def _load() -> list[type[Rule]]:
    rules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("gf"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            rules.append(module.RULE)
    rules.sort(key=lambda r: r.id)
    return rules


ALL_RULES: list[type[Rule]] = _load()
RULES_BY_ID: dict[str, type[Rule]] = {r.id: r for r in ALL_RULES}
