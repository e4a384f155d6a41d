# GF212 negative: the flow model is wrapped in DataParallel and the optimizer holds the
# wrapped module's parameters (`net.module.parameters()`). Only the first iteration calls
# `net.module(...)` under no_grad, as a warm-up that sets up data-dependent state, and
# skips the step; every training call goes through the wrapper, `net(...)`, with
# gradients on, which runs the same module, so its parameters get gradients.
import torch
import torch.nn as nn


def train(flow_model, batches, lr=1e-4):
    net = nn.DataParallel(flow_model)
    net.train()
    optimizer = torch.optim.Adam(net.module.parameters(), lr=lr)
    for i, (content, style) in enumerate(batches):
        if i == 0:
            with torch.no_grad():
                _ = net.module(content, forward=True)
            continue
        z_content = net(content, forward=True)
        z_style = net(style, forward=True)
        mixed = net(z_content, forward=False, style=z_style)
        loss = (mixed - content).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
