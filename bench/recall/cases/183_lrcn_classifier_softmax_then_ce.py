"""Source: https://github.com/doronharitan/human_activity_recognition_LRCN/issues/4
Title: Softmax and CrossEntropyLoss
What went wrong: the activity-recognition model (frame features, an LSTM, a linear head) applies
a softmax at the end of its forward, and the training loop feeds that output to
`CrossEntropyLoss`; removing the softmax made the model converge faster.
runs: trains; double softmax weakens the gradients
scope: documented
"""
import torch
import torch.nn as nn


class ConvLstm(nn.Module):
    def __init__(self, feat=12, hidden=16, classes=5):
        super().__init__()
        self.frame_encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, feat), nn.ReLU())
        self.lstm = nn.LSTM(feat, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, clips):
        b, t = clips.shape[:2]
        feats = self.frame_encoder(clips.flatten(0, 1)).view(b, t, -1)
        out, _ = self.lstm(feats)
        return self.softmax(self.head(out[:, -1]))


model = ConvLstm()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    clips, labels = torch.randn(2, 6, 3, 4, 4), torch.randint(0, 5, (2,))
    optimizer.zero_grad()
    loss = criterion(model(clips), labels)  # expect: GF308
    loss.backward()
    optimizer.step()
