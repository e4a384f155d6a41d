# GF307 negative: an actor-critic update detaches the advantage for the actor's
# loss; the critic is trained by the earlier backward() of the same iteration.
import torch.nn.functional as F


def update(actor, critic, opt_a, opt_c, batches, gamma=0.99):
    for s, a, r, s2, done in batches:
        target = r + gamma * (1 - done) * critic(s2).detach()
        v = critic(s)
        critic_loss = F.mse_loss(v, target)
        opt_c.zero_grad()
        critic_loss.backward()
        opt_c.step()
        adv = (target - v).detach()
        actor_loss = -(actor(s).log_prob(a) * adv).mean()
        opt_a.zero_grad()
        actor_loss.backward()
        opt_a.step()
