# GF208 negative: the accuracy terms hold no graph. `hit_rate` compares the
# indices of the largest logits with the labels (`torch.max(..., 1)[1]`, then
# `torch.eq`), and a mean of that boolean tensor cast to float cannot require
# grad, whatever model output it was given. Scaling it by the batch size, or
# adding comparisons, `argmax` or `topk` indices directly, keeps no graph
# either. Only `running_loss += loss.item()` touches the loss, as a number.
import torch
import torch.nn as nn


def hit_rate(scores, labels):
    guesses = torch.max(scores, 1)[1]
    matches = torch.eq(guesses, labels)
    return torch.mean(matches.float())


model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(16, 20), torch.randint(0, 5, (16,))) for _ in range(4)]

for epoch in range(2):
    running_loss, weighted_acc, correct, top2, seen = 0.0, 0, 0, 0, 0
    for inputs, targets in batches:
        scores = model(inputs)
        loss = criterion(scores, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running_loss += loss.item()
        weighted_acc += hit_rate(scores, targets) * len(targets)
        correct += (scores.argmax(dim=1) == targets).sum()
        top2 += scores.topk(2, dim=1).indices.eq(targets[:, None]).any(dim=1).long().sum()
        seen += len(targets)
    print(epoch, running_loss, float(weighted_acc) / seen, int(correct), int(top2))
