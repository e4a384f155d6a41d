# GF213 positive: the embedding table is normalised by rebinding its name before
# the loss; the gradient printed afterwards is the normalised copy's: None.
import torch
import torch.nn.functional as F


def probe(targets):
    emb = torch.randn(10, 4, requires_grad=True)
    emb = F.normalize(emb, dim=1)
    loss = F.mse_loss(emb, targets)
    loss.backward()
    print("grad norm", emb.grad.norm().item())
    return loss.item()
