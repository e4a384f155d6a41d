# GF212 positive: the optimizer holds the wrapped module's parameters, but the wrapper is
# only ever called under no_grad (a feature extractor by mistake) and the loss comes from a
# separate head: the wrapped module's parameters never get a gradient.
import torch
import torch.nn as nn


def train(backbone, head, batches, lr=1e-3):
    net = nn.DataParallel(backbone)
    optimizer = torch.optim.SGD(list(net.module.parameters()) + list(head.parameters()), lr=lr)
    for x, y in batches:
        with torch.no_grad():
            feats = net(x)
        loss = nn.functional.cross_entropy(head(feats), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
