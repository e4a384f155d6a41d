# GF103 negative: single-step adversarial training (FGSM). The attack forward on
# `images + noise` is consumed by `torch.autograd.grad(loss, noise)`; only then is the
# perturbation updated through `.data` (a sign step, clamped to the budget), detached, and
# the training forward and backward run on the new input (the loss name is reused). The
# write lies after the only consumer of the attack graph and before the training forward.
import torch
import torch.nn.functional as F


def train_epoch(model, loader, opt, attack="fgsm", eps=8 / 255, step=10 / 255):
    model.train()
    for images, labels in loader:
        if attack == "fgsm":
            noise = torch.zeros_like(images, requires_grad=True)
            out = model(torch.clamp(images + noise, 0, 1))
            loss = F.cross_entropy(out, labels)
            g = torch.autograd.grad(loss, noise)[0]
            g = g.detach()
            noise.data = torch.clamp(noise.data + step * g.sign(), -eps, eps)
            noise.data = torch.clamp(images + noise.data, 0, 1) - images
        else:
            noise = torch.zeros_like(images)
        noise = noise.detach()
        out = model(images + noise)
        loss = F.cross_entropy(out, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
