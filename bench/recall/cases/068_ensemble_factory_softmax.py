"""Source: https://github.com/jeffheaton/app_deep_learning/blob/main/t81_558_class_08_2_pytorch_ensembles.ipynb
Title: (held-out survey, bench/HELDOUT2.md recall) ensemble of small networks
What went wrong: a factory returns a Softmax-terminated nn.Sequential; the ensemble keeps
several in a list and trains each, in a loop over the list, with CrossEntropyLoss.
runs: trains on doubly-softmaxed scores
scope: extension
"""
import torch
import torch.nn as nn


def build_ann(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_out), nn.Softmax(dim=1))


if __name__ == "__main__":
    x, y = torch.randn(32, 5), torch.randint(0, 2, (32,))
    models = [build_ann(5, 2) for _ in range(3)]
    criterion = nn.CrossEntropyLoss()
    for model in models:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(2):
            opt.zero_grad()
            loss = criterion(model(x), y)  # expect: GF308
            loss.backward()
            opt.step()
