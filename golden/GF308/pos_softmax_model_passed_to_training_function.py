# GF308 positive: the classifier is an nn.Sequential whose last layer is nn.Softmax,
# built at module level and also by a small factory, and both are handed to one
# training function that trains whatever it is given with CrossEntropyLoss. Every call
# passes a softmax model, so the loss sees probabilities.
import torch
import torch.nn as nn

clf = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5), nn.Softmax(dim=1))


def make_wide(hidden):
    return nn.Sequential(nn.Linear(20, hidden), nn.Tanh(), nn.Linear(hidden, 5), nn.Softmax(dim=1))


def fit(model, xs, ys, steps, use_gpu=False):
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    if use_gpu:
        model = model.cuda()
    for _ in range(steps):
        scores = model(xs)
        loss = loss_fn(scores, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()


xs, ys = torch.randn(16, 20), torch.randint(0, 5, (16,))
fit(clf, xs, ys, 10)
wide = make_wide(64)
fit(wide, xs, ys, 10)
