# GF208 negative: the per-batch score comes from a helper of this file that counts hits
# with `.item()` and divides by the dataset size it is handed. The size is `len(...)`
# of the dataset, bound at module level, so the helper gives a Python float here: the
# running score holds no graph even though the model output is passed in.
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
crit = nn.CrossEntropyLoss()
samples = [(torch.randn(5, 8), torch.randint(0, 4, (5,))) for _ in range(6)]
n_samples = len(samples) * 5


def share_correct(scores, target, size):
    guess = scores.argmax(dim=1)
    hits = (guess == target).sum().item()
    return hits / size


def epoch():
    running = 0.0
    score = 0.0
    for xb, yb in samples:
        scores = net(xb)
        err = crit(scores, yb)
        opt.zero_grad()
        err.backward()
        opt.step()
        running += err.item()
        score += share_correct(scores, yb, n_samples)
    return running, score


for _ in range(2):
    print(epoch())
