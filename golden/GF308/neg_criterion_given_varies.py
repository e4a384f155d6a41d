# GF308 negative: the loss function is a parameter, and the callers pass
# different criteria (one expects probabilities); the softmax is only wrong for
# some of them, which the function alone cannot show. A criterion nobody passes
# in this file is unknown.
import torch
import torch.nn as nn


def score(net, loss_fn, x, y):
    return loss_fn(net(x).softmax(dim=-1), y)


def score_unknown(net, loss_fn, x, y):
    return loss_fn(torch.softmax(net(x), dim=-1), y)


head = nn.Linear(12, 4)
x, y = torch.randn(6, 12), torch.randint(0, 4, (6,))
score(head, nn.CrossEntropyLoss(), x, y)
score(head, nn.NLLLoss(), x, y)
