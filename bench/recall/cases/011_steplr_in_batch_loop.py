"""Source: https://github.com/hazdzz/stgcn/issues/18
Title: confusion about scheduler.step()
What went wrong: a StepLR built with step_size=10 (epochs) and gamma=0.95 is stepped inside
the mini-batch loop, so the learning rate decays far too fast.
runs: trains but the LR shrinks every 10 batches instead of every 10 epochs
(epoch count modelled as 1000, the figure used in the issue's discussion)
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.95)
loss_fn = nn.MSELoss()
train_iter = [(torch.randn(32, 12), torch.randn(32, 1)) for _ in range(50)]

epochs = 1000
for epoch in range(epochs):
    model.train()
    for x, y in train_iter:
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()  # expect: GF202
