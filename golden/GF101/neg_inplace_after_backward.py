# GF101 negative: the probabilities are scaled in place for logging after
# backward() has used (and freed) the graph that saved them.
import torch
import torch.nn.functional as F


def train(model, loader, opt):
    for x, y in loader:
        probs = torch.softmax(model(x), dim=1)
        loss = F.nll_loss(torch.log(probs + 1e-8), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        probs.mul_(100.0)
        print(probs.max(1)[0].mean().item())
