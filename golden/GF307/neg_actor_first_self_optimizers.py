# GF307 negative: actor-critic updates on an agent object, actor first. The critic's
# value is cut from the advantage on purpose; the actor's loss still reaches the actor
# through its log-probabilities, and the critic learns from its own loss on the value
# it was not cut from. The optimizers are built in __init__ under a branch, so the step
# cannot name the one it steps; `self.actor` is not a model-like name either.
import torch
import torch.nn.functional as F
from torch.optim import Adam, SGD


class Agent:
    def __init__(self, actor, critic, use_adam=True, lr=3e-4):
        self.actor = actor
        self.critic = critic
        if use_adam:
            self.actor_optim = Adam(self.actor.parameters(), lr=lr)
            self.critic_optim = Adam(self.critic.parameters(), lr=lr)
        else:
            self.actor_optim = SGD(self.actor.parameters(), lr=lr)
            self.critic_optim = SGD(self.critic.parameters(), lr=lr)

    def update(self, obs, taken, returns, ent_coef=0.01):
        self.actor_optim.zero_grad()
        log_probs = self.actor(obs)
        entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
        chosen = (log_probs * taken).sum(-1)
        values = self.critic(obs).squeeze(-1)
        advantage = returns - values.detach()  # the policy gradient's weight, not a path to the critic
        policy_loss = -(chosen * advantage).mean() - ent_coef * entropy
        policy_loss.backward()
        self.actor_optim.step()

        self.critic_optim.zero_grad()
        value_loss = F.mse_loss(values, returns)
        value_loss.backward()
        self.critic_optim.step()

    def td_update(self, s, a, r, s_next, done, gamma=0.99):
        v = self.critic(s).flatten()
        with torch.no_grad():
            target = r + gamma * (1 - done) * self.critic(s_next).flatten()
        log_pi = torch.log(self.actor(s).flatten()[a])
        policy_loss = -(target - v).detach() * log_pi  # the TD error weighs the log-probability
        self.actor_optim.zero_grad()
        policy_loss.backward()
        self.actor_optim.step()
        value_loss = (target - v) ** 2
        self.critic_optim.zero_grad()
        value_loss.backward()
        self.critic_optim.step()
