"""Source: https://github.com/IBM/dstc-noesis/issues/18
Title: No need to use nn.Softmax layer when using nn.CrossEntropyLoss()
What went wrong: the dual encoder ends its forward with an `nn.Softmax` final layer, while the
evaluator's default loss function is `CrossEntropyLoss()`, which applies log-softmax again to
the probabilities it is given.
runs: trains; the loss sees softmax outputs, so gradients are flattened
scope: extension
"""
import torch
import torch.nn as nn


class DualEncoder(nn.Module):
    def __init__(self, vocab=50, dim=16, candidates=5):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.score = nn.Linear(dim, candidates)
        self.final_layer = nn.Softmax(dim=1)

    def forward(self, context):
        logits = self.score(self.emb(context))
        return self.final_layer(logits)


class Evaluator:
    def __init__(self, loss_func=nn.CrossEntropyLoss(), batch_size=64):
        self.loss_func = loss_func
        self.batch_size = batch_size

    def evaluate(self, model, context, target):
        output = model(context)
        return self.loss_func(output, target)  # expect: GF308


model = DualEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss = Evaluator().evaluate(model, torch.randint(0, 50, (4, 9)), torch.randint(0, 5, (4,)))
loss.backward()
optimizer.step()
