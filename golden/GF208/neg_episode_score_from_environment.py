# GF208 negative: the episode score adds the reward the environment returns for the
# action the network chose. The environment gives back plain numbers, whatever
# tensor the action came from, so the score holds no graph.
import gym
import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 2)

    def forward(self, obs):
        dist = torch.distributions.Categorical(logits=self.body(torch.as_tensor(obs, dtype=torch.float32)))
        action = dist.sample()
        return action.item(), dist.log_prob(action)


agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
env = gym.make("CartPole-v1")

for episode in range(10):
    obs = env.reset()
    score, done = 0.0, False
    while not done:
        action, logp = agent(obs)
        nxt, reward, done, info = env.step(action)
        score += reward
        value = agent.body(torch.as_tensor(nxt, dtype=torch.float32)).sum()
        loss = -logp * (reward + value.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
        obs = nxt
    print(episode, score)
