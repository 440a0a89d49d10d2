"""A small user-written network for the whole-network test: the corners mobilenet_v2 does not
reach, exported by `tools/camclass-export --module small_net.py:SmallNet` (no torchvision).

Odd input size (13x13), asymmetric 'same' padding (kernel 4), dilation 2, grouped (not
depthwise) convolution, a BatchNorm with no convolution before it (-> depthwise 1x1 conv),
a ReLU whose input has two users (stays a separate clamp node), a clamp activation with
two-sided and one-sided ranges, add with a fused ReLU, mean over (2, 3), view, two linear
layers, and a softmax output (kind "probabilities").
"""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

# PyTorch notes that an even 'same' kernel pads asymmetrically; that is the point here.
warnings.filterwarnings("ignore", message="Using padding='same' with even kernel")


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn_in = nn.BatchNorm2d(3)
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(8)
        self.same = nn.Conv2d(8, 8, 4, padding="same")
        self.dilated = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.dilated_bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 7)

    def forward(self, x):
        x = F.relu6(self.stem_bn(self.stem(self.bn_in(x))))
        y = self.relu(self.same(x))  # fused into the conv
        z = torch.clamp(self.dilated_bn(self.dilated(y)), min=-1.0, max=2.5)
        s = self.relu(x + z)  # fused into the add
        t = self.relu(s)  # s also feeds the residual below: this one stays a clamp node
        u = torch.clamp(self.same(t), min=-0.25) + s  # self.same again: a second node
        v = u.mean((2, 3))
        v = torch.clamp(self.fc1(v.view(1, -1)), max=3.0)
        return torch.softmax(self.fc2(v), dim=-1)
