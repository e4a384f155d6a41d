# GF103 positive in the loop body: `model.fc.weight.data.clamp_` runs between
# the forward pass and backward, so the reported loss comes from unclamped
# weights while the update is applied to clamped ones. Fix: clamp right after
# `optimizer.step()`, keeping the keyword arguments.
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(10, 32)
        self.fc = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc(torch.tanh(self.hidden(x)))


model = Regressor()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
c = 0.1

for step in range(500):
    x = torch.randn(32, 10)
    y = x.sum(dim=1, keepdim=True)
    pred = model(x)
    loss = criterion(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        model.fc.weight.clamp_(min=-c, max=c)
    if step % 100 == 0:
        print(step, loss.item())
