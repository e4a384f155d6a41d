"""GF208 negative: a two-domain loop skips the pairs of batches whose sizes differ, so the whole body of a
step sits under an `if`. `head_nll` is set to 0 first thing in that `if`, then summed over the heads of this
one batch; the loss that is backpropagated is built from other terms. The reset runs before the sum on every
pass that reaches it, so the total holds one batch's graph, dropped at the next pair: nothing grows."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHead(nn.Module):
    def __init__(self, d=8, n_cls=3, n_heads=2):
        super().__init__()
        self.body = nn.Linear(d, 16)
        self.heads = nn.ModuleList([nn.Linear(16, n_cls) for _ in range(n_heads)])
        self.joint = nn.Linear(16, n_cls)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return [head(h) for head in self.heads], self.joint(h)


def adapt(net, source, target, opt):
    for (xs, ys), (xt, _) in zip(source, target):
        if len(xs) == len(xt):
            head_nll = 0
            per_head, joint = net(xs)
            _, joint_t = net(xt)
            for k in range(len(per_head)):
                head_nll += F.nll_loss(F.log_softmax(per_head[k], dim=1), ys)
            entropy_t = -(F.softmax(joint_t, 1) * F.log_softmax(joint_t, 1)).sum(1).mean()
            loss = F.cross_entropy(joint, ys) + 0.1 * entropy_t
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    net = MultiHead()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    src = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
    tgt = [(torch.randn(4, 8), None) for _ in range(3)]
    adapt(net, src, tgt, opt)
