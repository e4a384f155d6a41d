"""Source: https://github.com/Safe-DS/Library/issues/581
Title: Remove additional softmax function if ClassificationNeuralNetwork uses CategoricalCrossEntropy
What went wrong: the library's classification network builds its layers into a list, appends a
softmax as the last activation and wraps the list in a `Sequential`; its fit loop then trains with
`CrossEntropyLoss`, which applies log-softmax a second time.
runs: trains; the loss sees softmax outputs
scope: extension
"""
import torch
import torch.nn as nn


def create_internal_model(sizes, num_classes):
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    layers.append(nn.Linear(sizes[-1], num_classes))
    layers.append(nn.Softmax(dim=1))
    return nn.Sequential(*layers)


def fit(model, batches, epochs=2):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)  # expect: GF308
            loss.backward()
            optimizer.step()
    return model


fit(create_internal_model([6, 10, 10], 3), [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)])
