# GF211 negative: the transfer-learning tutorial's phase loop sets the mode by
# phase before each pass over the data; backward() and step() run only in the
# training phase.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def fit(loaders, epochs=3):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            for x, y in loaders[phase]:
                opt.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    loss = ((model(x) - y) ** 2).mean()
                    if phase == "train":
                        loss.backward()
                        opt.step()
