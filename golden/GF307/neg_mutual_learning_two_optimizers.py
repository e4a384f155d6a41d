# GF307 negative: deep mutual learning. Each student matches the other's detached soft
# prediction; both students' optimizers step after the one backward, so the term built on
# `peer_b.detach()` still trains `student_b` (its log-probabilities are the live input).
import torch
import torch.nn as nn
import torch.nn.functional as F

student_a = nn.Linear(16, 5)
student_b = nn.Linear(16, 5)
opt_a = torch.optim.Adam(student_a.parameters(), lr=1e-3)
opt_b = torch.optim.Adam(student_b.parameters(), lr=1e-3)


def train_epoch(batches):
    for x, y in batches:
        out_a = student_a(x)
        out_b = student_b(x)
        peer_a = F.softmax(out_a, dim=1)
        peer_b = F.softmax(out_b, dim=1)
        mimic_a = F.kl_div(F.log_softmax(out_a, dim=1), peer_b.detach(), reduction="batchmean")
        mimic_b = F.kl_div(F.log_softmax(out_b, dim=1), peer_a.detach(), reduction="batchmean")
        loss = F.cross_entropy(out_a, y) + F.cross_entropy(out_b, y) + mimic_a + mimic_b
        opt_a.zero_grad()
        opt_b.zero_grad()
        loss.backward()
        opt_a.step()
        opt_b.step()
