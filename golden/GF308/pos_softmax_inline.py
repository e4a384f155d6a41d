# GF308 positive: probabilities passed to cross_entropy, which applies
# log_softmax itself. Gradients shrink (more with more classes), the loss plateaus.
import torch.nn.functional as F


def loss_fn(logits, targets):
    return F.cross_entropy(F.softmax(logits, dim=1), targets)
