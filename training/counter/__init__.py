"""Training data and runs for the pebble counter and the big-stone classifier.

``python -m training.counter gen`` writes ``vision.synth`` wide-generator scenes (JPEG plus
truth JSON in render-public's layout) into a cache folder, one folder per split: ``train``
(every ground and piece family but the held-out ones), ``val`` (the same families, other
seeds), ``heldout-ground`` and ``heldout-piece`` (only the left-out family). The seed list is
the dataset: scene i of a split is drawn from that split's seed base + i alone.
"""
