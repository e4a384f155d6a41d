# GF208 negative: `+=` that builds the loss being backpropagated (terms added
# into `loss`, a distillation total) is not history accumulation.
import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Linear(16, 4)
teacher = nn.Linear(16, 4)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
loader = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(100)]

for x, y in loader:
    optimizer.zero_grad()
    logits = student(x)
    loss = F.cross_entropy(logits, y)
    with torch.no_grad():
        soft = F.softmax(teacher(x), dim=-1)
    kd = F.kl_div(F.log_softmax(logits, dim=-1), soft, reduction="batchmean")
    loss += 0.5 * kd
    total = loss
    total = total + 1e-4 * logits.pow(2).mean()
    total.backward()
    optimizer.step()
