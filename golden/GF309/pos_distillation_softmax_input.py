"""Distillation where the student's temperature-scaled softmax is handed to kl_div as its input.

kl_div reads its input as log-probabilities, so the loss below can go negative and its gradient
pulls the student toward the teacher's top class instead of the teacher's distribution.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tiny(nn.Module):
    def __init__(self, width=16, classes=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, classes))

    def forward(self, x):
        return self.body(x)


def soft_loss(student_logits, teacher_logits, temperature=3.0):
    student_soft = F.softmax(student_logits / temperature, dim=1)
    teacher_soft = F.softmax(teacher_logits / temperature, dim=1)
    return F.kl_div(student_soft, teacher_soft, reduction="batchmean") * temperature ** 2


def run(steps=3):
    student, teacher = Tiny(), Tiny()
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    for _ in range(steps):
        x = torch.randn(8, 16)
        with torch.no_grad():
            t = teacher(x)
        loss = soft_loss(student(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
