# GF307 positive: the prediction is detached before the loss. It is the only
# path from the model, so backward() raises "element 0 of tensors does not
# require grad". Detect only.
import torch
import torch.nn as nn

model = nn.Linear(10, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(100):
    x, y = torch.randn(16, 10), torch.randint(0, 2, (16,))
    out = model(x)
    loss = criterion(out.detach(), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
