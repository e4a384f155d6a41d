# GF201 positive with a multiplier: `1e-5 * criterion(...)` scales the whole
# loss that reaches backward. With SGD + momentum this is not the same as a
# smaller lr. Fix: `loss = criterion(output, target)`.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
loader = [(torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))) for _ in range(40)]

for epoch in range(2):
    for i, (images, target) in enumerate(loader):
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            print(f"[{epoch}, {i}] loss: {loss.item():.3e}")
