# GF212 negative: the agent keeps a separate optimizer for its encoder, and the
# encoder does get gradients.
# - `update_critic` encodes the current observation with gradients on (only the
#   next observation, a target, is encoded under no_grad) and steps both
#   optimizers: the encoder is trained through the critic loss;
# - `update_actor` encodes under no_grad and also steps the encoder's optimizer
#   (it reapplies what `update_critic` left in `.grad`); the encoder is not
#   frozen, since `update_critic` runs it with gradients on, so there is no
#   silently untrained module to report.
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Linear(24, 16), nn.ReLU())
        self.critic = nn.Linear(16, 1)
        self.actor = nn.Linear(16, 2)
        self.encoder_opt = torch.optim.Adam(self.encoder.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)

    def update_critic(self, obs, next_obs, reward):
        h = self.encoder(obs)
        with torch.no_grad():
            target = reward + 0.99 * self.critic(self.encoder(next_obs))
        loss = (self.critic(h) - target).pow(2).mean()
        self.encoder_opt.zero_grad()
        self.critic_opt.zero_grad()
        loss.backward()
        self.critic_opt.step()
        self.encoder_opt.step()

    def update_actor(self, obs):
        with torch.no_grad():
            h = self.encoder(obs)
        loss = -self.critic(torch.cat([h[:, :14], self.actor(h)], dim=1)).mean()
        self.actor_opt.zero_grad()
        loss.backward()
        self.actor_opt.step()
        self.encoder_opt.step()


if __name__ == "__main__":
    agent = Agent()
    for _ in range(3):
        agent.update_critic(torch.randn(4, 24), torch.randn(4, 24), torch.randn(4, 1))
        agent.update_actor(torch.randn(4, 24))
