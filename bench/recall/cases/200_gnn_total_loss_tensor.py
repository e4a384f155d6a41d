"""Source: https://github.com/dmlc/dgl/issues/5302
Title: [Examples] Update examples to record total loss via `total_loss += loss.detach()`
What went wrong: the graph examples record the epoch loss with `total_loss += loss`, which adds
the backpropagated loss tensor itself, so `total_loss` joins the autograd graph and the work of
every batch is chained onto it (the issue proposes `loss.detach()`).
runs: trains; `total_loss` ends the epoch with a grad_fn linking all batches (the run prints it)
scope: documented
"""
import torch
import torch.nn as nn


class GCN(nn.Module):
    def __init__(self, in_feats=6, hidden=16, classes=3):
        super().__init__()
        self.w1 = nn.Linear(in_feats, hidden)
        self.w2 = nn.Linear(hidden, classes)

    def forward(self, adj, feats):
        h = torch.relu(adj @ self.w1(feats))
        return adj @ self.w2(h)


model = GCN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
graphs = [(torch.rand(5, 5).softmax(-1), torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(4)]
total_loss = 0
for adj, feats, labels in graphs:
    loss = nn.functional.cross_entropy(model(adj, feats), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss  # expect: GF208
print(total_loss.grad_fn)
