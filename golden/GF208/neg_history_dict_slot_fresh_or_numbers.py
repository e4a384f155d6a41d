"""Dicts of curves that keep no graph, or not shown to grow: numbers appended, a slot replaced by a fresh
list inside the loop (only the last value survives), a dict merged from another (`**defaults`), entries
replaced through a key the rule cannot read or by `update()`, an entry swapped for a bounded deque before
the loop, and a list trimmed in the loop."""
from collections import deque

import torch
import torch.nn as nn


def fit(defaults, epochs=5):
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    numbers = {"loss": []}
    latest = {"loss": []}
    merged = {**defaults, "loss": []}
    for epoch in range(epochs):
        loss = model(torch.randn(8, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        numbers["loss"].append(loss.item())
        latest["loss"] = []
        latest["loss"].append(loss)
        merged["loss"].append(loss)
    return numbers, latest, merged


def fit_rewritten(epochs=5, which="loss"):
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    by_key = {"loss": []}
    updated = {"loss": []}
    bounded = {"loss": []}
    bounded["loss"] = deque(maxlen=1)
    recent = []
    for epoch in range(epochs):
        loss = model(torch.randn(8, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        by_key[which] = []
        by_key["loss"].append(loss)
        updated.update(loss=[])
        updated["loss"].append(loss)
        bounded["loss"].append(loss)
        recent.append(loss)
        if len(recent) > 4:
            recent.clear()
    return by_key, updated, bounded, recent
