# GF201 negative: overhaul-distillation style term weight. In
# `loss_CE + loss_distill.sum() / batch_size / 1000` the `/ 1000` applies to
# the distillation term only, not to the whole loss.
import torch.nn.functional as F


def train_with_distill(d_net, optimizer, trainloader, device="cpu"):
    d_net.train()
    d_net.s_net.train()
    d_net.t_net.train()
    train_loss = 0.0
    for inputs, targets in trainloader:
        inputs, targets = inputs.to(device), targets.to(device)
        batch_size = inputs.shape[0]
        outputs, loss_distill = d_net(inputs)
        loss_CE = F.cross_entropy(outputs, targets)
        loss = loss_CE + loss_distill.sum() / batch_size / 1000
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss += loss_CE.item()
    return train_loss / len(trainloader)
