# GF308 negative: the training function is called once with a model ending in
# nn.Softmax and once with a plain logits model. What `model(xs)` gives depends on the
# call, so the function's loss line is not shown to get probabilities; and `train_any`
# is called by nobody in view. Both stay silent.
import torch
import torch.nn as nn

probs_head = nn.Sequential(nn.Linear(10, 3), nn.Softmax(dim=1))
logits_head = nn.Sequential(nn.Linear(10, 3))


def fit(model, xs, ys):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(5):
        loss = nn.functional.cross_entropy(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()


def train_any(model, xs, ys):
    loss = nn.CrossEntropyLoss()(model(xs), ys)
    loss.backward()


xs, ys = torch.randn(8, 10), torch.randint(0, 3, (8,))
fit(logits_head, xs, ys)
with torch.no_grad():
    fit(probs_head, xs, ys)
