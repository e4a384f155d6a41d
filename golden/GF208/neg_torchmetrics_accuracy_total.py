"""A torchmetrics classification metric's value holds no graph: summing it per batch is fine.

`Accuracy` thresholds or argmaxes the predictions (torchmetrics marks it not differentiable), so
`running_acc += acc_metric(logits, labels)` adds a tensor without a grad_fn. (The same total of
`loss` itself is reported: see pos_soft_metric_module_total.)
"""
import torch
from torch import nn
from torchmetrics import Accuracy

net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
acc_metric = Accuracy(task="multiclass", num_classes=4).to("cpu")
batches = [(torch.randn(5, 6), torch.randint(0, 4, (5,))) for _ in range(3)]

for epoch in range(2):
    running_loss, running_acc = 0, 0
    for features, labels in batches:
        logits = net(features)
        loss = criterion(logits, labels)
        running_loss += loss.item()
        running_acc += acc_metric(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, running_loss / len(batches), running_acc / len(batches))
