# GF305 negative: factories that are not shown to return a module on every path. One
# falls off the end for an unknown name (returns None), one may hand back a plain
# scorer object, one returns whatever a library loader gives, and one is a generator.
# Calling `forward` on what they return is left alone: `obj(x)` could raise TypeError.
import torch
import torch.nn as nn

from thirdparty import load_pretrained


class RuleScorer:
    def forward(self, x):
        return x.sum(dim=1)


def build(kind):
    if kind == "linear":
        return nn.Linear(4, 1)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def build_scorer(learned):
    if learned:
        return nn.Linear(4, 1)
    return RuleScorer()


def from_hub(name):
    model = load_pretrained(name)
    return model


def each_model():
    yield nn.Linear(4, 1)


def run(x):
    a = build("mlp")
    b = build_scorer(False)
    c = from_hub("tiny")
    outs = [a.forward(x), b.forward(x), c.forward(x)]
    for m in each_model():
        outs.append(m.forward(x))
    return outs


if __name__ == "__main__":
    run(torch.randn(2, 4))
