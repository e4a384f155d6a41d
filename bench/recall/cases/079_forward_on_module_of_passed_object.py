"""Source: https://github.com/ZacBi/CS224n-2019-solutions/blob/master/assignments/a3/run.py
Title: (held-out survey, bench/HELDOUT4A.md recall) dependency-parser training loop
What went wrong: the network is held by a plain parser object that the training helpers
receive as a parameter, and the batch loop calls `parser.model.forward(x)`; the script set
`parser.model` to the network before training, so the call skips the module's hooks.
runs: trains; a forward hook registered on `parser.model` would not run (latent here)
scope: extension (the module is an attribute of an object passed in as a parameter)
"""
import torch
import torch.nn as nn


class Parser:
    def __init__(self, transitions):
        self.transitions = transitions
        self.model = None


class ParserNet(nn.Module):
    def __init__(self, n_features=12, n_classes=3):
        super().__init__()
        self.hidden = nn.Linear(n_features, 32)
        self.out = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def train_for_epoch(parser, batches, optimizer, loss_func):
    parser.model.train()
    for x, y in batches:
        optimizer.zero_grad()
        logits = parser.model.forward(x)  # expect: GF305
        loss = loss_func(logits, y)
        loss.backward()
        optimizer.step()


def train(parser, batches, n_epochs=2):
    optimizer = torch.optim.Adam(parser.model.parameters(), lr=5e-4)
    loss_func = nn.CrossEntropyLoss()
    for _ in range(n_epochs):
        train_for_epoch(parser, batches, optimizer, loss_func)


def main():
    parser = Parser(["S", "LA", "RA"])
    parser.model = ParserNet()
    batches = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(3)]
    train(parser, batches)


if __name__ == "__main__":
    main()
