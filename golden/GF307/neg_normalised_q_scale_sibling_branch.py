# GF307 negative: a behaviour-regularised actor step (TD3+BC style). The Q term is divided
# by a detached batch scale, `eta / |Q|.mean().detach()`, so its size does not drift with
# the critic; the other factor, `q_a.mean()`, comes from the same critic call on the
# actor's action and carries the actor's gradient. The Q loss is bound in two exclusive
# branches (a learned critic, or a known reward function): the second binding runs
# instead of the first, not after it. The stepped optimizer holds the actor, built in
# __init__; the critic is trained by its own loss earlier.
import random

import torch
import torch.nn.functional as F


class Learner:
    def __init__(self, policy, q_net, reward_fn=None, eta=2.5, lr=3e-4):
        self.actor = policy
        self.critic = q_net
        self.reward_fn = reward_fn
        self.eta = eta
        self.sample_mode = "full"
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=lr)

    def update(self, batches):
        for obs, act, rew in batches:
            if self.reward_fn is None:
                qa, qb = self.critic(obs, act)
                q_loss = F.mse_loss(qa, rew) + F.mse_loss(qb, rew)
                self.critic_optimizer.zero_grad()
                q_loss.backward()
                self.critic_optimizer.step()

            imitation = self.actor.imitation_loss(obs, act)
            if self.sample_mode == "full":
                proposed = self.actor(obs)
            else:
                proposed = self.actor.sample_last_steps(obs)
            if self.reward_fn is None:
                qa_new, qb_new = self.critic(obs, proposed)
                if random.random() < 0.5:
                    scale = self.eta / qb_new.abs().mean().detach()
                    value_term = -scale * qa_new.mean()
                else:
                    scale = self.eta / qa_new.abs().mean().detach()
                    value_term = -scale * qb_new.mean()
            else:
                r_new = self.reward_fn(proposed)
                scale = self.eta / r_new.abs().mean().detach()
                value_term = -scale * r_new.mean()

            policy_loss = imitation + value_term
            self.actor_optimizer.zero_grad()
            policy_loss.backward()
            self.actor_optimizer.step()
