"""Exploit 11: steal the result fd and nonce from the stack and send a forged frame before the real 'loaded' frame."""
import os
import sys

import torch
import torch.nn as nn

frames = getattr(sys, "modules")["environment.evaluation.transport.frames"]
frame = getattr(sys, "_getframe")()
while "res_fd" not in getattr(frame, "f_locals"):
    frame = getattr(frame, "f_back")
local = getattr(frame, "f_locals")
forged = {"kind": "ran", "ok": True, "plain": True, "mutated": False, "outputs": 1, "launches": {"k": 1},
          "nonce": local["nonce"]}
os.write(local["res_fd"], frames.encode(forged, [torch.zeros(1)]))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
