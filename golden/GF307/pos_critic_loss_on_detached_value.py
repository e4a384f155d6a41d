# GF307 positive next to an actor-critic update: the actor step is fine, but the
# critic's own loss is built on its value cut from autograd, and nothing else reaches
# that backward(): it raises "element 0 of tensors does not require grad".
import torch.nn.functional as F
from torch.optim import Adam


class Agent:
    def __init__(self, actor, critic, lr=3e-4):
        self.actor = actor
        self.critic = critic
        self.actor_optim = Adam(self.actor.parameters(), lr=lr)
        self.critic_optim = Adam(self.critic.parameters(), lr=lr)

    def update(self, obs, taken, returns):
        self.actor_optim.zero_grad()
        chosen = (self.actor(obs) * taken).sum(-1)
        advantage = returns - self.critic(obs).squeeze(-1).detach()
        policy_loss = -(chosen * advantage).mean()
        policy_loss.backward()
        self.actor_optim.step()

        self.critic_optim.zero_grad()
        values = self.critic(obs).squeeze(-1)
        value_loss = F.mse_loss(values.detach(), returns)
        value_loss.backward()
        self.critic_optim.step()
