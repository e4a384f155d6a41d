"""Source: https://github.com/CorentinJ/Real-Time-Voice-Cloning/issues/237
Title: Fixed the None grad of the encoder on GPU
What went wrong: the speaker encoder's learnable similarity scale and bias are created as
`nn.Parameter(torch.tensor([10.])).to(loss_device)`; with the loss device on CUDA the attribute is
a copy of the parameter, so its gradient is None and the scale is never trained.
runs: on a CUDA loss device the two attributes are not parameters and get no gradient; on CPU `.to` is a no-op and they register
scope: documented
"""
import torch
import torch.nn as nn


class SpeakerEncoder(nn.Module):
    def __init__(self, device, loss_device):
        super().__init__()
        self.loss_device = loss_device
        self.lstm = nn.LSTM(8, 16, batch_first=True).to(device)
        self.similarity_weight = nn.Parameter(torch.tensor([10.0])).to(loss_device)  # expect: GF303
        self.similarity_bias = nn.Parameter(torch.tensor([-5.0])).to(loss_device)

    def forward(self, utterances):
        _, (hidden, _) = self.lstm(utterances)
        return nn.functional.normalize(hidden[-1], dim=1)

    def loss(self, embeds):
        sim = (embeds @ embeds.t()).to(self.loss_device)
        sim = sim * self.similarity_weight + self.similarity_bias
        return nn.functional.cross_entropy(sim, torch.arange(len(sim), device=self.loss_device))


loss_device = "cuda" if torch.cuda.is_available() else "cpu"
model = SpeakerEncoder("cpu", loss_device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
loss = model.loss(model(torch.randn(4, 5, 8)))
loss.backward()
optimizer.step()
print(model.similarity_weight.grad)
