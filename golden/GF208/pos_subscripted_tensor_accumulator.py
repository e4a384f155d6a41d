# GF208 positive: an ensemble trained side by side keeps one running cost per member in a torch
# tensor. `costs[k] += loss / n_batches` writes a tensor that carries the graph into a slot of
# `costs`: autograd records a CopySlices node for each write, so by the end of the epoch `costs`
# links to the graph of every batch. Accumulating `.item()` keeps `costs` a plain tensor.
import torch
import torch.nn as nn

members = [nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)) for _ in range(3)]
optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in members]
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(4)]

for epoch in range(2):
    costs = torch.zeros(len(members))
    for inputs, labels in batches:
        for k, (member, optimizer) in enumerate(zip(members, optimizers)):
            optimizer.zero_grad()
            loss = criterion(member(inputs), labels)
            loss.backward()
            optimizer.step()
            costs[k] += loss / len(batches)
    print(epoch, costs.mean())
