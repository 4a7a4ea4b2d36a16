"""Torch building blocks shared by the offline trainers (counter, big stone, spread, finder).

Imported only by training code that already needs torch; nothing at run time reads it.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn


def conv_bn_relu(i: int, o: int, stride: int = 1, dil: int = 1, k: int = 3) -> nn.Sequential:
    """Conv (same padding, no bias: the batch norm has one) + batch norm + ReLU."""
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride, dil * (k // 2), dilation=dil, bias=False),
        nn.BatchNorm2d(o),
        nn.ReLU(inplace=True),
    )


def export_onnx(net: nn.Module, path: Path, dummy: torch.Tensor) -> None:
    """ONNX that cv2.dnn reads: opset 13 from the TorchScript exporter, for ``dummy``'s shape."""
    path.parent.mkdir(parents=True, exist_ok=True)
    net.eval()
    torch.onnx.export(
        net,
        (dummy,),
        str(path),
        input_names=["x"],
        output_names=["y"],
        opset_version=13,
        dynamo=False,
        do_constant_folding=True,
    )
