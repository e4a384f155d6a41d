# GF212 negative next to the printed-gradient positive: the adapter also runs with gradients
# on outside the class (an auxiliary loss on its output), so it is trained; printing its
# gradient changes nothing.
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
images = torch.randn(3, 10)
aux = model.adapter(torch.relu(model.encoder(images))).pow(2).mean()
loss = nn.functional.cross_entropy(model(images), torch.tensor([0, 2, 4])) + aux
loss.backward()
optimizer.step()
print(model.adapter.weight.grad is not None)
