"""log_target says the target is in log space, but it is a softmax (first function), and a
log_softmax target with the flag left at its default (second function)."""
import torch.nn as nn
import torch.nn.functional as F


def wrong_flag(student_logits, teacher_logits):
    return F.kl_div(F.log_softmax(student_logits, 1), F.softmax(teacher_logits, 1),
                    reduction="batchmean", log_target=True)


def missing_flag(student_logits, teacher_logits):
    criterion = nn.KLDivLoss(reduction="batchmean")
    return criterion(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1))
