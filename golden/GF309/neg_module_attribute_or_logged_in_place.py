"""Not probabilities by the time kl_div reads them: a head's `softmax` attribute that is an nn.LogSoftmax
(a module's attribute, not the tensor method), and a softmax turned into its log in place (`log_()`,
`torch.log(..., out=...)`) before the call."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.softmax = nn.LogSoftmax(dim=1)


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head()
        self.kl = nn.KLDivLoss(reduction="batchmean")

    def forward(self, x, teacher_logits):
        return self.kl(self.head.softmax(self.head.fc(x)), F.softmax(teacher_logits, dim=1))


def logged_in_place(s, t):
    p = F.softmax(s, dim=1)
    p.log_()
    return F.kl_div(p, F.softmax(t, dim=1), reduction="batchmean")


def logged_into_out(s, t):
    q = F.softmax(s, dim=1)
    torch.log(q, out=q)
    return F.kl_div(q, F.softmax(t, dim=1), reduction="batchmean")
