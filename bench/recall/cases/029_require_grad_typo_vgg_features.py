"""Source: https://github.com/udacity/deep-learning-v2-pytorch/issues/12
Title: CNN - Transfer learning notebook - `require_grad` needs to be requires_grad`
What went wrong: the transfer-learning solution freezes the VGG feature layers with
`param.require_grad = False`, which just sets an unused attribute; the layers keep training.
runs: trains but the "frozen" feature extractor is updated too
scope: documented
"""
import torch
import torch.nn as nn
import torch.optim as optim

features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
classifier = nn.Linear(16, 5)
vgg16 = nn.Sequential(features, classifier)

for param in features.parameters():
    param.require_grad = False  # expect: GF210

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(vgg16.parameters(), lr=0.001)
for _ in range(2):
    images, labels = torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))
    optimizer.zero_grad()
    loss = criterion(vgg16(images), labels)
    loss.backward()
    optimizer.step()
