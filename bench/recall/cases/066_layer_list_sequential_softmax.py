"""Source: https://github.com/jeffheaton/app_deep_learning/blob/main/t81_558_class_08_4_bayesian_hyperparameter_opt.ipynb
Title: (held-out survey, bench/HELDOUT2.md recall) hyperparameter search network
What went wrong: the network's layers are collected in a list that ends with an appended
nn.Softmax, unpacked into nn.Sequential(*layers), and trained with CrossEntropyLoss.
runs: trains on doubly-softmaxed scores
scope: documented
"""
import torch
import torch.nn as nn


class SearchNet(nn.Module):
    def __init__(self, n_in, n_out, width=64, shrink=0.5):
        super().__init__()
        layers = []
        prev = n_in
        while width > 8:
            layers.append(nn.Linear(prev, width))
            layers.append(nn.PReLU())
            prev, width = width, int(width * shrink)
        layers.append(nn.Linear(prev, n_out))
        layers.append(nn.Softmax(dim=1))
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


if __name__ == "__main__":
    net = SearchNet(10, 3)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters())
    for _ in range(2):
        xb, yb = torch.randn(16, 10), torch.randint(0, 3, (16,))
        outputs = net(xb)
        loss = criterion(outputs, yb)  # expect: GF308
        opt.zero_grad()
        loss.backward()
        opt.step()
