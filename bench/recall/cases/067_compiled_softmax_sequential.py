"""Source: https://github.com/jeffheaton/app_deep_learning/blob/main/t81_558_class_04_3_kfold.ipynb
Title: (held-out survey, bench/HELDOUT2.md recall) k-fold classification
What went wrong: an nn.Sequential ending in nn.Softmax is wrapped by torch.compile and the
compiled model's output goes to CrossEntropyLoss.
runs: trains on doubly-softmaxed scores (torch.compile needs a working compiler toolchain)
scope: documented
"""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3), nn.Softmax(dim=1))
model = torch.compile(model, backend="eager")
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

if __name__ == "__main__":
    x, y = torch.randn(20, 6), torch.randint(0, 3, (20,))
    for epoch in range(2):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)  # expect: GF308
        loss.backward()
        optimizer.step()
