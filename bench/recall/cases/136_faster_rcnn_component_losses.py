"""Source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/35
Title: 代码存在内存泄漏问题，建议进行优化 (the code leaks memory; please optimise it)
What went wrong: the training loop adds the total loss and each of its component losses
(RPN and ROI, location and class) straight into running sums without `.item()`, so memory grows
batch after batch.
runs: trains; the running sums are tensors with grad_fns that chain every batch's graph
scope: documented
"""
import torch
import torch.nn as nn

rpn = nn.Conv2d(4, 6, 1)
roi = nn.Linear(64, 5)
optimizer = torch.optim.SGD(list(rpn.parameters()) + list(roi.parameters()), lr=1e-2)

total_loss = 0
rpn_loc_loss = 0
rpn_cls_loss = 0
roi_cls_loss = 0
for iteration in range(5):
    feats = torch.randn(2, 4, 4, 4)
    rpn_out = rpn(feats)
    rpn_loc = rpn_out[:, :4].pow(2).mean()
    rpn_cls = nn.functional.binary_cross_entropy_with_logits(rpn_out[:, 4:], torch.rand(2, 2, 4, 4))
    roi_cls = nn.functional.cross_entropy(roi(feats.flatten(1)), torch.randint(0, 5, (2,)))
    total = rpn_loc + rpn_cls + roi_cls
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    total_loss += total
    rpn_loc_loss += rpn_loc  # expect: GF208
    rpn_cls_loss += rpn_cls
    roi_cls_loss += roi_cls
print(total_loss / 5, rpn_loc_loss / 5, rpn_cls_loss / 5, roi_cls_loss / 5)
