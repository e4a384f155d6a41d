# GF307 negative: two segmenters teach each other. Each one's hard pseudo-label (an argmax of its
# detached probabilities) is the target of the other's cross-entropy; one backward of the sum, and
# both optimizers step. The argmax has no gradient, so the detach cuts nothing, and each pseudo term
# trains the network whose logits it reads: the second optimizer's model counts as trained too.
import torch
import torch.nn as nn


def fit(loader, steps, n_labelled, weight=0.1):
    net_a = nn.Conv2d(1, 3, 3, padding=1)
    net_b = nn.Conv2d(1, 3, 3, padding=1)
    opt_a = torch.optim.SGD(net_a.parameters(), lr=0.05, momentum=0.9)
    opt_b = torch.optim.SGD(net_b.parameters(), lr=0.05, momentum=0.9)
    xent = nn.CrossEntropyLoss()
    for step, (img, mask) in zip(range(steps), loader):
        logits_a = net_a(img)
        logits_b = net_b(img)
        prob_a = torch.softmax(logits_a, dim=1)
        prob_b = torch.softmax(logits_b, dim=1)
        label_from_a = torch.argmax(prob_a[n_labelled:].detach(), dim=1)
        label_from_b = prob_b[n_labelled:].detach().argmax(dim=1)
        teach_a = xent(logits_a[n_labelled:], label_from_b)
        teach_b = xent(logits_b[n_labelled:], label_from_a)
        loss_a = xent(logits_a[:n_labelled], mask[:n_labelled]) + weight * teach_a
        loss_b = xent(logits_b[:n_labelled], mask[:n_labelled]) + weight * teach_b
        total = loss_a + loss_b
        opt_a.zero_grad()
        opt_b.zero_grad()
        total.backward()
        opt_a.step()
        opt_b.step()
