"""Source: https://github.com/asawaswapnil/DL-Homeworks-with-PyTorch/blob/master/hw1/Part2/p2.py
Title: (held-out survey, bench/HELDOUT4A.md recall) homework MLP for frame classification
What went wrong: a factory returns an nn.Sequential whose last layer is nn.Softmax and the
script hands it to `training_routine(net, ...)`, which trains whatever it gets with
CrossEntropyLoss: the loss applies a second softmax to probabilities.
runs: trains, slowly (the loss saturates near log(C))
scope: extension (the softmax model reaches the loss through a function parameter)
"""
import torch
import torch.nn as nn


def training_routine(net, dataset, n_iters, gpu):
    train_x, train_y = dataset
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    if gpu:
        train_x, train_y = train_x.cuda(), train_y.cuda()
        net = net.cuda()
    for i in range(n_iters):
        out = net(train_x)
        loss = criterion(out, train_y)  # expect: GF308
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i % 10 == 0:
            print(i, loss.item())


def one_hidden_layer(hidden):
    return nn.Sequential(nn.Linear(40, hidden), nn.ReLU(), nn.Linear(hidden, 13), nn.Softmax(dim=1))


data = torch.randn(32, 40), torch.randint(0, 13, (32,))
mlp = one_hidden_layer(64)
training_routine(mlp, data, 30, gpu=False)
