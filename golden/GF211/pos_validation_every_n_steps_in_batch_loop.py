# GF211 positive: validation runs every `eval_every` optimizer steps from inside the
# batch loop. `evaluate` switches the model to eval mode and does not switch it back;
# train mode is set again only at the top of the next epoch, so every batch after the
# first validation of an epoch trains with dropout off and batch norm frozen.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
train_batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(10)]
val_batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(2)]
eval_every = 3


def evaluate(model, batches):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


step = 0
for epoch in range(2):
    net.train()
    for x, y in train_batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
        step += 1
        if step % eval_every == 0:
            print(step, evaluate(net, val_batches))
