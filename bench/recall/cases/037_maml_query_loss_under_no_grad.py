"""Source: https://github.com/dragen1860/MAML-Pytorch/issues/40
Title: questions with respect to the no_grad()
What went wrong: with one inner update the only query loss that reaches the meta-update was
computed inside `torch.no_grad()`, so backward raises "element 0 of tensors does not
require grad".
runs: raises RuntimeError (element 0 of tensors does not require grad) in backward()
scope: documented
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(8, 5)
meta_optim = torch.optim.Adam(net.parameters(), lr=1e-3)
update_step = 1
x_spt, y_spt = torch.randn(5, 8), torch.randint(0, 5, (5,))
x_qry, y_qry = torch.randn(15, 8), torch.randint(0, 5, (15,))

losses_q = [0 for _ in range(update_step + 1)]
loss = F.cross_entropy(net(x_spt), y_spt)
with torch.no_grad():
    logits_q = net(x_qry)  # expect: GF212
    loss_q = F.cross_entropy(logits_q, y_qry)
    losses_q[1] += loss_q
for k in range(1, update_step):
    logits_q = net(x_qry)
    losses_q[k + 1] += F.cross_entropy(logits_q, y_qry)

loss_q = losses_q[-1]
meta_optim.zero_grad()
loss_q.backward()
meta_optim.step()
