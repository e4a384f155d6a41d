# GF205 negative: distributed autograd. Each batch opens its own autograd context;
# the backward pass and the distributed optimizer's step both take that context's
# id, and the gradients live in the context rather than in `.grad`.
import torch
import torch.distributed.autograd as dist_autograd
import torch.nn.functional as F


def run_epochs(model, dist_opt, batches, epochs=3):
    for epoch in range(epochs):
        for tokens, labels in batches:
            with dist_autograd.context() as cid:
                logits = model(tokens)
                loss = F.cross_entropy(logits, labels)
                dist_autograd.backward(cid, [loss])
                dist_opt.step(cid)
