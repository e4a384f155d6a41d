"""Source: https://github.com/nishnik/Deep-Semantic-Similarity-Model-PyTorch/issues/2
Title: Softmax and CrossEntropyLoss
What went wrong: the DSSM model ends its forward in a softmax over the candidate scores and
the training loop feeds that to nn.CrossEntropyLoss, which applies log-softmax again.
runs: trains but gradients are squashed by the double softmax
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CDSSM(nn.Module):
    def __init__(self, d=30, n_neg=4):
        super().__init__()
        self.q_proj = nn.Linear(d, 16)
        self.d_proj = nn.Linear(d, 16)
        self.learn_gamma = nn.Conv1d(n_neg + 1, n_neg + 1, 1, groups=n_neg + 1)

    def forward(self, q, docs):
        qv = torch.tanh(self.q_proj(q))
        dv = torch.tanh(self.d_proj(docs))
        dots = (dv * qv.unsqueeze(1)).sum(-1, keepdim=True)
        with_gamma = self.learn_gamma(dots).squeeze(-1)
        return F.softmax(with_gamma, dim=1)


model = CDSSM()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    q, docs = torch.randn(2, 30), torch.randn(2, 5, 30)
    y_pred = model(q, docs)
    loss = criterion(y_pred, torch.zeros(2, dtype=torch.long))  # expect: GF308
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
