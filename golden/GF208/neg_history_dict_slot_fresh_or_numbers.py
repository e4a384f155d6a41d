"""Dicts of curves that keep no graph: numbers appended, a slot replaced by a fresh list inside the
loop (only the last value survives), and a dict merged from another (`**defaults`), whose entries the
rule cannot see."""
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
