"""Style-transfer optimisation: each layer-loss module's `backward()` backpropagates its own loss and returns
it. The score summing them is reset to 0 on every call of the closure (one optimizer step), so no graph
outlives the step."""
import torch
import torch.nn as nn


class FeatureLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, x):
        self.loss = (x - self.target).pow(2).mean()
        return x

    def backward(self):
        self.loss.backward(retain_graph=True)
        return self.loss


def optimise(features, layer_losses, picture, steps=10):
    picture.requires_grad_(True)
    optimizer = torch.optim.LBFGS([picture])
    for step in range(steps):
        def closure():
            optimizer.zero_grad()
            features(picture)
            total = 0
            for layer_loss in layer_losses:
                total += layer_loss.backward()
            return total
        optimizer.step(closure)


def optimise_plain(features, layer_losses, picture, steps=10):
    picture.requires_grad_(True)
    optimizer = torch.optim.Adam([picture], lr=0.01)
    for step in range(steps):
        optimizer.zero_grad()
        features(picture)
        total = 0
        for layer_loss in layer_losses:
            total += layer_loss.backward()
        optimizer.step()
        print(step, float(total))
