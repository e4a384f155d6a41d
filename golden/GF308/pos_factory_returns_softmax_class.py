# GF308 positive: a factory of this file returns a classifier whose forward ends in
# a softmax, and the model it builds is trained with cross_entropy. The scores go
# through softmax twice: once in forward, once inside cross_entropy.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TagClassifier(nn.Module):
    def __init__(self, n_in, n_tags):
        super().__init__()
        self.proj = nn.Linear(n_in, 32)
        self.head = nn.Linear(32, n_tags)

    def forward(self, x):
        h = torch.relu(self.proj(x))
        return F.softmax(self.head(h), dim=-1)


def make_classifier(cfg):
    model = TagClassifier(cfg["n_in"], cfg["n_tags"])
    return model


def train(cfg, batches):
    model = make_classifier(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


if __name__ == "__main__":
    train({"n_in": 6, "n_tags": 4}, [(torch.randn(8, 6), torch.randint(0, 4, (8,)))])
