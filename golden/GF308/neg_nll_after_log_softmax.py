# GF308 negative: nll_loss on log_softmax is the correct pair.
import torch.nn as nn
import torch.nn.functional as F


def loss_fn(logits, targets):
    return F.nll_loss(F.log_softmax(logits, dim=1), targets)


criterion = nn.NLLLoss()


def loss_fn2(logits, targets):
    return criterion(logits.log_softmax(-1), targets)
