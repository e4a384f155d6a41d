# GF208 negative next to the subscripted tensor accumulator: a numpy array converts each value it
# is given to a float (with a warning for a tensor that requires grad), so no graph is kept; a
# torch tensor given `.item()` stays a plain tensor; and a slot of a tensor given a batch-size
# count holds no loss at all.
import numpy as np
import torch
import torch.nn as nn

members = [nn.Linear(6, 3) for _ in range(2)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in members]
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(4)]

for epoch in range(2):
    as_numpy = np.zeros(len(members))
    as_items = torch.zeros(len(members))
    seen = torch.zeros(len(members))
    for inputs, labels in batches:
        for k, (member, optimizer) in enumerate(zip(members, optimizers)):
            optimizer.zero_grad()
            loss = criterion(member(inputs), labels)
            loss.backward()
            optimizer.step()
            as_numpy[k] += loss / len(batches)
            as_items[k] += loss.item() / len(batches)
            seen[k] += len(labels)
    print(epoch, as_numpy.mean(), as_items.mean(), seen)
