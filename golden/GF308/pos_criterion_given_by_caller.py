# GF308 positive: the loss function is a parameter; the file's only call passes
# nn.CrossEntropyLoss, and the step feeds it softmax probabilities.
import torch
import torch.nn as nn


def run_epoch(net, loss_fn, opt, batches):
    for x, y in batches:
        probs = net(x).softmax(dim=-1)
        loss = loss_fn(probs, y)
        opt.zero_grad()
        loss.backward()
        opt.step()


head = nn.Linear(12, 4)
run_epoch(head, nn.CrossEntropyLoss(), torch.optim.SGD(head.parameters(), lr=0.1),
          [(torch.randn(6, 12), torch.randint(0, 4, (6,)))])
