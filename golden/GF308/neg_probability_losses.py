# GF308 negative: losses that expect probabilities or log-probabilities.
import torch
import torch.nn.functional as F


def losses(logits, y, teacher_logits):
    p = torch.sigmoid(logits[:, 0])
    bce = F.binary_cross_entropy(p, y.float())
    kd = F.kl_div(F.log_softmax(logits, -1), F.softmax(teacher_logits, -1), reduction="batchmean")
    nll = F.nll_loss(torch.log(F.softmax(logits, -1) + 1e-9), y)
    return bce + kd + nll
