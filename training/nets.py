"""Torch building blocks shared by the offline trainers (counter, big stone, spread, finder):
layers, the ONNX export, the device and the forked batch loader.

Imported only by training code that already needs torch; nothing at run time reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


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


def on_device(net: nn.Module, device: str) -> nn.Module:
    """``net`` moved to ``device``; on a GPU, convolutions and products in full float32
    (PyTorch's TF32 default on Hopper is the one difference from training on the CPU)."""
    if device.startswith("cuda"):
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    return net.to(device)


def save_weights(net: nn.Module, path: Path) -> None:
    """The weights as CPU tensors, whatever device trained them (export reads them anywhere)."""
    torch.save({k: v.detach().cpu() for k, v in net.state_dict().items()}, path)


Batches = Iterator[tuple[np.ndarray, np.ndarray]]


def forked_batches(
    stream: Callable[[int | None], Batches], workers: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """A trainer's numpy batches as tensors. ``stream(worker)`` makes one worker's endless
    stream (None: this process); with ``workers`` processes they are forked, so the scenes
    the trainer loaded stay shared, copy-on-write, and each cuts its own samples."""

    class Stream(IterableDataset):  # type: ignore[misc]
        def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
            info = get_worker_info()
            for x, y in stream(None if info is None else info.id):
                yield torch.from_numpy(x), torch.from_numpy(y)

    if workers == 0:
        return iter(Stream())
    return iter(
        DataLoader(
            Stream(),
            batch_size=None,
            num_workers=workers,
            prefetch_factor=4,
            multiprocessing_context="fork",
            worker_init_fn=lambda _: cv2.setNumThreads(1),
        )
    )


def folded_convs(
    path: Path,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray]]:
    """The weight and bias of every convolution with a bias in an ONNX export, in graph
    order (the exporter folds each batch norm into the convolution before it), and every
    stored array by name (layers the exporter kept as named: linear heads)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [
        (init[n.input[1]], init[n.input[2]])
        for n in model.graph.node
        if n.op_type == "Conv" and len(n.input) == 3
    ]
    return convs, init


def unfold(state: dict[str, torch.Tensor], key: str, weight: np.ndarray, bias: np.ndarray) -> None:
    """Put one folded convolution into ``state``'s conv + batch norm at ``key`` (the conv's
    ``…0.weight``): the conv takes the weight, zero for input channels the export lacks,
    and the norm becomes the identity plus the folded bias, so the net computes exactly
    what the export did once its norms are frozen (``freeze_norms``)."""
    conv = torch.zeros_like(state[key])
    conv[:, : weight.shape[1]] = torch.tensor(weight)
    state[key] = conv
    norm = key[: -len("0.weight")] + "1."
    state[norm + "weight"] = torch.ones_like(state[norm + "weight"])
    state[norm + "bias"] = torch.tensor(bias)
    state[norm + "running_mean"] = torch.zeros_like(state[norm + "running_mean"])
    state[norm + "running_var"] = torch.full_like(state[norm + "running_var"], 1.0 - 1e-5)


def freeze_norms(net: nn.Module) -> None:
    """Batch norms on their stored statistics while the rest trains (``unfold``): batch
    statistics would undo the fold."""
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
