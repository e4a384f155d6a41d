"""Source: https://github.com/shaoxiongji/federated-learning/issues/9
Title: Pytorch CrossEntropy function contains softmax
What went wrong: the MLP's forward ends in a softmax activation and the local update feeds its
output to `nn.CrossEntropyLoss`, which applies log-softmax itself; the reporter gained five points
of accuracy (90 % to 95 %) by removing the softmax.
runs: trains; the loss is computed on probabilities, so it stays near log(10) and gradients are damped
scope: documented
"""
import torch
import torch.nn as nn


class ClientMLP(nn.Module):
    def __init__(self, n_in, n_hidden, n_classes):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(n_hidden, n_classes)
        self.act_out = nn.Softmax(dim=1)

    def forward(self, x):
        h = torch.relu(self.drop(self.fc1(x.flatten(1))))
        return self.act_out(self.fc2(h))


net = ClientMLP(64, 32, 10)
loss_func = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.5)
for batch_idx in range(3):
    images, labels = torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))
    net.zero_grad()
    log_probs = net(images)
    loss = loss_func(log_probs, labels)  # expect: GF308
    loss.backward()
    optimizer.step()
print(loss.item())
