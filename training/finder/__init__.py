"""Offline training of the board-line network (``vision/models/boardlines.onnx``).

The network maps a downscaled frame to a per-pixel probability that it lies on
one of the board's drawn lines (outer rectangle, divider, square separators,
the two arcs), learnt from the Blender renders' region polygons; the locator
(``vision.locate.learned``) searches that map instead of the raw chalk ridges
when ``LocateConfig.finder`` says so. Needs the ``train`` extra (PyTorch); the
shipped model runs with OpenCV only. ``python -m training.finder --help``.
"""
