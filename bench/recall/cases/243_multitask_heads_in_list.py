"""Source: https://github.com/pytorch/pytorch/issues/15005
Title: model.cuda() doesn't automatically detect layers initialized in a list
What went wrong: a multitask classifier appends one `nn.Linear` head per task to a plain Python list
in `__init__`; the heads are not submodules, so `model.cuda()` leaves them on the CPU, and the
optimizer built from `model.parameters()` never trains them.
runs: trains; `model.parameters()` holds only the shared layer, and the task heads never change (the run prints both)
scope: documented
"""
import torch
import torch.nn as nn


class MultiTask(nn.Module):
    def __init__(self, input_features, num_classes):
        super().__init__()
        self.shared = nn.Linear(input_features, 32)
        self.heads = []  # expect: GF304
        for c in num_classes:
            self.heads.append(nn.Linear(32, c))

    def forward(self, x):
        h = torch.relu(self.shared(x))
        return [head(h) for head in self.heads]


num_classes = [5, 2, 10, 3]
model = MultiTask(20, num_classes)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
before = model.heads[0].weight.clone()
for step in range(3):
    x = torch.randn(8, 20)
    outs = model(x)
    loss = sum(nn.functional.cross_entropy(o, torch.randint(0, c, (8,))) for o, c in zip(outs, num_classes))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(len(list(model.parameters())), torch.equal(before, model.heads[0].weight))
