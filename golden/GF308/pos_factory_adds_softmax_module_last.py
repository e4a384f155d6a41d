# GF308 positive: the factory starts from an empty Sequential, adds its layers one
# by one with `add_module`, and the last one added is a Softmax; the training
# step calls `net.forward(batch)` and gives the probabilities to
# CrossEntropyLoss, which takes a log-softmax of them again. Detect only.
import torch
import torch.nn as nn


def make_classifier(n_in, n_classes):
    net = nn.Sequential()
    net.add_module("hidden", nn.Linear(n_in, 24))
    net.add_module("act", nn.Tanh())
    net.add_module("scores", nn.Linear(24, n_classes))
    net.add_module("probs", nn.Softmax(dim=-1))
    return net


classifier = make_classifier(10, 3)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.Adam(classifier.parameters(), lr=1e-3)
for _ in range(2):
    batch, labels = torch.randn(16, 10), torch.randint(0, 3, (16,))
    opt.zero_grad()
    probs = classifier.forward(batch)
    loss = criterion(probs, labels)
    loss.backward()
    opt.step()
