# GF101 positive: the same edit, but the loss backpropagated afterwards is built from the
# softmax's log, whose node saved the softmax: backward() raises "modified by an inplace
# operation".
import torch
import torch.nn.functional as F


def compare_gradients(n=6, c=4):
    logits = torch.randn(n, c, requires_grad=True)
    labels = torch.randint(c, (n,))
    probs = F.softmax(logits, dim=1)
    loss = F.nll_loss(torch.log(probs), labels)
    expected = probs
    expected = expected / n
    loss.backward()
    print(expected, logits.grad)
