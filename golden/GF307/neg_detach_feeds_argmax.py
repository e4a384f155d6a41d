# GF307 negative: the detached logits only feed an argmax (and a comparison), which has no
# gradient with or without the detach, so nothing was cut: the error-rate term carries no
# gradient either way, and dropping `.detach()` would change nothing.
import torch
import torch.nn as nn

net = nn.Linear(10, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def train(batches):
    for x, y in batches:
        logits = net(x)
        wrong = (logits.detach().argmax(dim=1) != y).float().mean()
        sure = (torch.softmax(logits, dim=1).detach() > 0.9).float().mean()
        loss = nn.functional.cross_entropy(logits, y) + 0.0 * wrong + 0.0 * sure
        opt.zero_grad()
        loss.backward()
        opt.step()
