"""Source: https://github.com/rll-research/cic/issues/5
Title: No gradient through the cnn encoder
What went wrong: the agent's update encodes the observations inside `torch.no_grad()`, yet it
keeps an optimizer for the CNN encoder and steps it, so the encoder's weights never change
during pre-training.
runs: trains; the encoder's parameters get no gradient and are never updated
scope: documented
"""
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.Flatten())
        self.head = nn.Linear(8 * 7 * 7, 16)
        self.encoder_opt = torch.optim.Adam(self.encoder.parameters(), lr=1e-4)
        self.head_opt = torch.optim.Adam(self.head.parameters(), lr=1e-4)

    def update(self, obs, next_obs):
        with torch.no_grad():
            obs = self.encoder(obs)  # expect: GF212
            next_obs = self.encoder(next_obs)
        loss = (self.head(obs) - self.head(next_obs)).pow(2).mean()
        self.encoder_opt.zero_grad()
        self.head_opt.zero_grad()
        loss.backward()
        self.head_opt.step()
        self.encoder_opt.step()


if __name__ == "__main__":
    agent = Agent()
    agent.update(torch.randn(4, 3, 15, 15), torch.randn(4, 3, 15, 15))
    print(all(p.grad is None for p in agent.encoder.parameters()))
