# GF303 negative: the Parameter's data is computed from a tensor the caller
# passes in (`init_adj`, built by the training script and already moved to the
# device there). Ops on a tensor keep its device, so `.to(device)` of a
# Parameter already on `device` returns the Parameter itself: it stays
# registered and trained. Which device the caller's tensor is on is not shown
# in this file, so the rule stays silent.
import torch
import torch.nn as nn


class AdaptiveGraph(nn.Module):
    def __init__(self, init_adj, device, rank=4):
        super().__init__()
        u, s, v = torch.svd(init_adj)
        left = torch.mm(u[:, :rank], torch.diag(s[:rank] ** 0.5))
        right = torch.mm(torch.diag(s[:rank] ** 0.5), v[:, :rank].t())
        self.src_emb = nn.Parameter(left, requires_grad=True).to(device)
        self.dst_emb = nn.Parameter(right, requires_grad=True).to(device)
        self.scale = nn.Parameter(init_adj.mean().reshape(1)).to(device)

    def forward(self):
        return torch.softmax(torch.relu(self.src_emb @ self.dst_emb), dim=1) * self.scale


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    adjacency = torch.rand(6, 6).to(device)    # on the device before the model sees it
    graph = AdaptiveGraph(adjacency, device)
    print(graph().shape, len(list(graph.parameters())))
