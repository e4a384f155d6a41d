"""Source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/blob/master/Char01%20DQN/DQN.py
Title: (held-out survey, bench/HELDOUT.md recall) DQN agent's networks
What went wrong: the agent builds its evaluation and target networks in one tuple
assignment and calls .forward() on them, which skips the modules' hooks.
runs: runs (latent: no hook is registered in the agent)
scope: extension
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, x):
        return self.out(torch.relu(self.fc1(x)))


class DQN:
    def __init__(self):
        self.eval_net, self.target_net = Net(), Net()
        self.optimizer = torch.optim.Adam(self.eval_net.parameters(), lr=1e-3)

    def choose_action(self, state):
        values = self.eval_net.forward(state)  # expect: GF305
        return int(values.argmax(dim=1)[0])


if __name__ == "__main__":
    print(DQN().choose_action(torch.randn(1, 4)))
