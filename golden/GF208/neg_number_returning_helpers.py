# GF208 negative: what is added is a plain Python number. `hit_rate` ends in
# `.item()`, and `loss` is rebound to `log_score`, a helper that sums `math.log`
# terms, before it is added; neither keeps an autograd graph.
import math

import torch
import torch.nn as nn


def hit_rate(scores, labels):
    hits = (scores.detach().argmax(dim=1) == labels).sum().item()
    return hits


def log_score(labels, probs):
    acc = 0
    for p, y in zip(probs.tolist(), labels.tolist()):
        acc += math.log(max(p[y], 1e-12))
    return -acc / len(labels)


net = nn.Linear(6, 3)
crit = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
data = [(torch.randn(10, 6), torch.randint(0, 3, (10,))) for _ in range(3)]

for epoch in range(2):
    hits_total = 0
    score_total = 0.0
    for xb, yb in data:
        out = net(xb)
        loss = crit(out, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hits_total += hit_rate(out, yb)
        loss = log_score(yb, out.softmax(dim=1))
        score_total += loss
    print(epoch, hits_total, score_total / len(data))
