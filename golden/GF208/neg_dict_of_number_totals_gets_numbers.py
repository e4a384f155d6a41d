# GF208 negative next to the dict-of-totals positive: the entries receive `.item()` values,
# detached terms, or entries already turned into floats; one dict is made afresh in every
# batch (it only lives for that batch), one sum is taken under no_grad, and an empty dict
# filled with setdefault is not shown to hold numbers.
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(10, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(6, 10), torch.randn(6, 3), torch.randint(0, 3, (6,))) for _ in range(3)]


def epoch_items():
    stats = {"reg": 0.0, "cls": 0.0}
    for x, target, labels in batches:
        out = net(x)
        terms = {"reg": F.mse_loss(out, target), "cls": F.cross_entropy(out, labels)}
        total = terms["reg"] + terms["cls"]
        opt.zero_grad()
        total.backward()
        opt.step()
        for part, term in terms.items():
            stats[part] += term.item()
        stats["reg"] += terms["reg"].detach()
    return stats


def epoch_floats_first():
    stats = {"reg": 0.0, "cls": 0.0}
    for x, target, labels in batches:
        out = net(x)
        terms = {"reg": F.mse_loss(out, target), "cls": F.cross_entropy(out, labels)}
        opt.zero_grad()
        (terms["reg"] + terms["cls"]).backward()
        opt.step()
        for part, term in terms.items():
            terms[part] = term.item()
            stats[part] += terms[part]
    return stats


def epoch_fresh_and_no_grad():
    kept = {}
    for x, target, labels in batches:
        per_batch = {"reg": 0.0}
        out = net(x)
        loss = F.mse_loss(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        per_batch["reg"] += loss
        kept.setdefault("reg", 0.0)
        with torch.no_grad():
            kept["reg"] += F.mse_loss(net(x), target)
        print(per_batch)
    return kept
