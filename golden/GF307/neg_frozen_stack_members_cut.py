import torch
import torch.nn as nn

# The teacher stack is not optimized: cutting what its members return is the point.
teacher = nn.ModuleList([nn.Linear(6, 6) for _ in range(2)])
student = nn.Linear(6, 6)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
batch = torch.randn(8, 6)

for step in range(10):
    hint = batch
    for layer in teacher:
        hint = torch.relu(layer(hint))
    target = hint.detach()
    loss = (student(batch) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
