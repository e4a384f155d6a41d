import torch
import torch.nn as nn

model = nn.Linear(5, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
loader = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(6)]

for epoch in range(30):
    # one batch per epoch while the operator is tuned by hand: the loop body always ends in `break`
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        scheduler.step()
        break
