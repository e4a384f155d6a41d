# GF209 negative: a bare `view`/`reshape` whose literal sizes cannot hold the
# tensor's literal element count raises RuntimeError ("shape '[1, 9]' is invalid
# for input of size 8"), so nothing is silently discarded: the line is a crash the
# user sees at once. (A reshape whose sizes fit is reported: pos cases.)
import torch

grid = [[
    [1, 2, 3, 4],
    [5, 6, 7, 8],
]]
t = torch.tensor(grid)          # 1 x 2 x 4: eight elements
t.reshape(1, 9)                 # raises
t.view(-1, 3)                   # 8 is not a multiple of 3: raises
w = torch.zeros(2, 5)
w.view((3, 3))                  # ten elements do not fill 3 x 3: raises

