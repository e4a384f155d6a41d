# GF212 positive: the captioner's adapter runs only under no_grad inside a helper method, while
# the optimizer holds every parameter of the model; the script then prints the adapter's
# weight gradient (None). Reading a tensor attribute through the submodule runs nothing, so it
# does not count as a call of the adapter with gradients on.
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(10, 8)
        self.adapter = nn.Linear(8, 8)
        self.decoder = nn.Linear(8, 5)

    def adapt(self, feats):
        with torch.no_grad():
            return self.adapter(feats)

    def forward(self, images):
        return self.decoder(self.adapt(torch.relu(self.encoder(images))))


model = Captioner()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss = nn.functional.cross_entropy(model(torch.randn(3, 10)), torch.tensor([0, 2, 4]))
loss.backward()
optimizer.step()
print(model.adapter.weight.grad, model.adapter.weight.shape)
