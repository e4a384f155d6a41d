"""Source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11
Title: zero_grad() 질문 있습니다. (zero_grad is called once per epoch)
What went wrong: the CIFAR-10 lab clears gradients once at the start of each epoch, outside
the batch loop, so gradients accumulate over all batches of the epoch.
runs: trains but the effective step grows with the batch index
scope: documented
"""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
trainloader = [(torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))) for _ in range(6)]

for epoch in range(2):
    net.train()
    optimizer.zero_grad()
    train_loss = 0.0
    for inputs, labels in trainloader:
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()  # expect: GF205
        optimizer.step()
        train_loss += loss.item()
