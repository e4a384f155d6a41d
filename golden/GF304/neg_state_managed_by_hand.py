# GF304 negative: tensors that require grad on purpose without being
# parameters. CAVIA-style context parameters are reset for every task and
# adapted with torch.autograd.grad in the inner loop (the outer optimizer must
# not train them); a recurrent memory is reassigned on every call.
import torch
import torch.nn as nn


class CaviaNet(nn.Module):
    def __init__(self, n_context=4):
        super().__init__()
        self.fc = nn.Linear(8 + n_context, 1)
        self.context_params = torch.zeros(n_context, requires_grad=True)
        self.memory = torch.zeros(8, requires_grad=True)

    def reset_context_params(self):
        self.context_params = self.context_params.detach() * 0
        self.context_params.requires_grad = True

    def adapt(self, loss, lr=0.1):
        (g,) = torch.autograd.grad(loss, self.context_params, create_graph=True)
        return self.context_params - lr * g

    def forward(self, x):
        self.memory = self.memory * 0.9 + x.mean(0) * 0.1
        ctx = self.context_params.expand(x.shape[0], -1)
        return self.fc(torch.cat([x, ctx], dim=1))
