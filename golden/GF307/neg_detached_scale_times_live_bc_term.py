# GF307 negative: the behaviour-cloning penalty is weighted by a detached magnitude of the
# critic's value, `lam * |Q|.mean().detach() * mse(pi, a)`. The detached factor is a scale on
# purpose; the same product's other factor, `mse(pi, a)`, carries the actor's gradient. The
# optimizer stepped after this backward holds the actor (built in __init__), so the term
# is judged against the actor, and it is live.
import torch
import torch.nn.functional as F


class OfflineAgent:
    def __init__(self, pi_net, q_net, lam=0.1, lr=1e-4):
        self.actor = pi_net
        self.critic = q_net
        self.lam = lam
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.steps = 0

    def train_step(self, s, a, target_q):
        self.steps += 1
        q_loss = F.smooth_l1_loss(self.critic(s, a), target_q)
        self.critic_optimizer.zero_grad()
        q_loss.backward()
        self.critic_optimizer.step()

        if self.steps % 2 == 0:
            pi = self.actor(s)
            q = self.critic(s, pi)
            pi_loss = -q.mean()
            pi_loss = pi_loss + self.lam * q.abs().mean().detach() * F.mse_loss(pi, a)
            self.actor_optimizer.zero_grad()
            pi_loss.backward()
            self.actor_optimizer.step()
