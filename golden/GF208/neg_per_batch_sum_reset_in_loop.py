# GF208 negative: a deep-supervision model returns one prediction per decoder stage. The
# per-stage cross-entropy is summed into `stage_ce`, which is set to 0 at the top of every
# batch: it sums this batch's terms only and is rebound next batch, so no graph outlives
# the iteration (it is logged here, not backpropagated; `.item()` would be wrong if it were).
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(net, batches, opt, n_classes=4):
    ce = nn.CrossEntropyLoss()
    for x, y in batches:
        preds = net(x)
        stage_ce = 0
        dice_like = 0
        onehot = F.one_hot(y, n_classes).permute(0, 3, 1, 2).float()
        for k in range(len(preds)):
            logits = preds[k]
            prob = F.softmax(logits, dim=1)
            stage_ce += ce(logits, y)
            dice_like += ((prob - onehot) ** 2).mean()
        loss = 0.5 * dice_like
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("stage ce %.4f" % float(stage_ce))
