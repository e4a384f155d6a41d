# GF308 negative: the softmax output is used as probabilities (accuracy,
# confidence), while the loss gets the logits.
import torch
import torch.nn.functional as F


def step(model, x, y):
    logits = model(x)
    probs = F.softmax(logits, dim=1)
    loss = F.cross_entropy(logits, y)
    confidence = probs.max(dim=1).values.mean()
    acc = (probs.argmax(1) == y).float().mean()
    return loss, confidence, acc, torch.log(probs)
