"""Healthy: a student distilled from a teacher that runs in eval mode under no_grad and is in no optimizer."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4)).eval()
student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 4))
opt = torch.optim.SGD(student.parameters(), lr=0.1)
T = 2.0
for step in range(6):
    x = torch.randn(16, 10)
    with torch.no_grad():
        soft = F.softmax(teacher(x) / T, dim=1)
    logits = student(x)
    loss = F.kl_div(F.log_softmax(logits / T, dim=1), soft, reduction="batchmean") * T * T
    opt.zero_grad()
    loss.backward()
    opt.step()
