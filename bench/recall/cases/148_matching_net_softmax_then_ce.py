"""Source: https://github.com/gitabcworld/MatchingNetworks/issues/5
Title: Double softmax
What went wrong: the attentional classifier turns the support-set similarities into a softmax,
and the matching network then feeds those probabilities to `cross_entropy`, which applies
log-softmax again; the report suggests removing the first softmax.
runs: trains; the loss is computed on softmax outputs, which flattens its gradients
scope: extension (the softmax is mixed through a bmm with one-hot labels before the loss)
notes: left (branch r13). The attention output is a probability vector only because `support_onehot` is one-hot, which `forward` receives as an argument; a `bmm` of a softmax with an arbitrary matrix gives logits-like values, and nothing in the module shows which.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionalClassify(nn.Module):
    def forward(self, similarities, support_onehot):
        attention = F.softmax(similarities, dim=1)
        return attention.unsqueeze(1).bmm(support_onehot).squeeze(1)


class MatchingNetwork(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.embed = nn.Linear(dim, dim)
        self.classify = AttentionalClassify()

    def forward(self, support, support_onehot, query, target):
        s, q = self.embed(support), self.embed(query)
        sims = torch.einsum("bd,bkd->bk", F.normalize(q, dim=-1), F.normalize(s, dim=-1))
        preds = self.classify(sims, support_onehot)
        return F.cross_entropy(preds, target)  # expect: GF308


if __name__ == "__main__":
    net = MatchingNetwork()
    onehot = F.one_hot(torch.randint(0, 5, (4, 5)), 5).float()
    net(torch.randn(4, 5, 16), onehot, torch.randn(4, 16), torch.randint(0, 5, (4,))).backward()
