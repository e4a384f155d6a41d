"""Source: https://github.com/daniilidis-group/neural_renderer/pull/52
Title: Fixed a bug in look.py
What went wrong: the camera "look" transform converts the viewing direction to a tensor and
calls `.to(device)` on it without keeping the result; since `Tensor.to` is not in place, the
direction stays on the CPU while the vertices are on the GPU.
runs: on a CUDA machine raises RuntimeError (tensors on different devices); on CPU the bare `.to` changes nothing and it runs
scope: documented
"""
import torch
import torch.nn.functional as F


def look(vertices, eye, direction=(0.0, 1.0, 0.0), up=(0.0, 0.0, 1.0)):
    device = vertices.device
    direction = torch.tensor(direction, dtype=torch.float32)
    direction.to(device)  # expect: GF209
    up = torch.tensor(up, dtype=torch.float32, device=device)
    eye = torch.as_tensor(eye, dtype=torch.float32).to(device)
    z_axis = F.normalize(direction, dim=0)
    x_axis = F.normalize(torch.cross(up, z_axis, dim=0), dim=0)
    y_axis = F.normalize(torch.cross(z_axis, x_axis, dim=0), dim=0)
    r = torch.stack([x_axis, y_axis, z_axis])
    return (vertices - eye) @ r.t()


if __name__ == "__main__":
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    verts = torch.randn(1, 12, 3, device=dev, requires_grad=True)
    look(verts, eye=(0.0, -2.0, 0.0)).sum().backward()
