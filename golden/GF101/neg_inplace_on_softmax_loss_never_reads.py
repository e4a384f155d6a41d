# GF101 negative: a check script compares autograd's gradient of cross-entropy with the
# closed form softmax(x) - onehot(y). The loss is built first, from the logits alone; a
# separate softmax of the logits is then edited in place into the closed-form gradient.
# The backward that follows walks the loss's graph, which never saved that softmax, so it
# runs (checked with torch 2.13).
import torch
import torch.nn.functional as F


def compare_gradients(n=6, c=4):
    logits = torch.randn(n, c, requires_grad=True)
    labels = torch.randint(c, (n,))
    loss = F.cross_entropy(logits, labels)
    probs = F.softmax(logits, dim=1)
    logp = torch.log(probs)
    print(logp.sum())
    expected = probs
    expected[torch.arange(n), labels] -= 1
    expected /= n
    loss.backward()
    print(torch.allclose(expected, logits.grad))
