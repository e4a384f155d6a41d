"""kl_div used as documented: log-probabilities in, probabilities (or log_target=True with
log-probabilities) as the target; a log taken by hand; a helper of ours named kl_div."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def kd(student_logits, teacher_logits, T=2.0):
    a = F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                 reduction="batchmean")
    b = F.kl_div(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1),
                 reduction="batchmean", log_target=True)
    probs = F.softmax(student_logits, dim=1)
    c = F.kl_div(torch.log(probs + 1e-8), F.softmax(teacher_logits, dim=1), reduction="batchmean")
    d = F.kl_div(probs.clamp_min(1e-8).log(), F.softmax(teacher_logits, dim=1), reduction="batchmean")
    return a + b + c + d


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_probs = nn.LogSoftmax(dim=1)
        self.kl = nn.KLDivLoss(reduction="batchmean", log_target=True)

    def forward(self, logits, target_logits):
        return self.kl(self.log_probs(logits), self.log_probs(target_logits))


def kl_div(p, q):
    """Our own divergence of two probability vectors, not torch's."""
    return (p * (p / q).log()).sum()


def symmetric(p_logits, q_logits):
    p, q = F.softmax(p_logits, -1), F.softmax(q_logits, -1)
    return kl_div(p, q) + kl_div(q, p)


def moved_criterion(student_logits, teacher_logits, device):
    """log_target=True read from the constructor, not from the `.to(device)` that moves it."""
    criterion = nn.KLDivLoss(reduction="batchmean", log_target=True).to(device)
    return criterion(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1))
