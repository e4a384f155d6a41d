"""Targets whose space the call does not show stay silent: a criterion built from a config
(**kwargs may set log_target), a flag held in a variable, a submodule criterion given a
log_softmax target (its log_target is read only where it is built), and a target that is a
plain parameter of the function."""
import torch.nn as nn
import torch.nn.functional as F


def from_config(cfg, student_logits, teacher_logits):
    criterion = nn.KLDivLoss(**cfg)
    return criterion(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1))


def flag_in_variable(student_logits, teacher_logits, use_log_target):
    return F.kl_div(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1),
                    reduction="batchmean", log_target=use_log_target)


class Distiller(nn.Module):
    def __init__(self, criterion):
        super().__init__()
        self.criterion = criterion

    def forward(self, student_logits, teacher_logits):
        return self.criterion(F.log_softmax(student_logits, 1), F.log_softmax(teacher_logits, 1))


def plain_target(student_logits, target_distribution):
    return F.kl_div(F.log_softmax(student_logits, 1), target_distribution, reduction="batchmean")
