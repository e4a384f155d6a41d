# GF204 positive: the loop clears the gradients at the top of the iteration and
# again between backward() and step(). The second call is removed.
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(10, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 10), torch.randn(8, 1)) for _ in range(20)]

for epoch in range(5):
    for x, y in loader:
        optimizer.zero_grad()
        pred = model(x)
        loss = F.mse_loss(pred, y)
        loss.backward()
        optimizer.zero_grad(set_to_none=True)
        optimizer.step()
