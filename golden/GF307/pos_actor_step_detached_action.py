# GF307 positive: the actor step feeds the critic a detached action. The optimizer stepped
# after this backward holds the actor (built in __init__), and the loss's only path to the
# actor ran through that action: with it cut, backward still runs (the critic's parameters
# require grad) but every gradient of the actor stays None, and the actor never learns.
import torch


class DDPGLearner:
    def __init__(self, actor_net, critic_net, lr=1e-3):
        self.actor_net = actor_net
        self.critic_net = critic_net
        self.actor_opt = torch.optim.Adam(self.actor_net.parameters(), lr=lr)

    def actor_update(self, states):
        action = self.actor_net(states)
        actor_loss = -self.critic_net(states, action.detach()).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
