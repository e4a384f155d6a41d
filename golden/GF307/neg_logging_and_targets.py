# GF307 negative: `.item()` for logging, a stop-gradient inside a term that
# still carries gradient (a bootstrapped target), and a frozen teacher.
import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Linear(5, 3)
teacher = nn.Linear(5, 3)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
history = []

for step in range(10):
    x, y = torch.randn(4, 5), torch.randint(0, 3, (4,))
    out = student(x)
    with torch.no_grad():
        soft = F.softmax(teacher(x), dim=-1)
    boot = F.mse_loss(out, 0.9 * out.detach() + 0.1 * F.one_hot(y, 3).float())
    loss = F.cross_entropy(out, y) + F.kl_div(F.log_softmax(out, -1), soft, reduction="batchmean") + boot
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(loss.item())
    acc = (out.argmax(1) == y).float().mean().item()
