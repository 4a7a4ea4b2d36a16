"""Sequence datasets: the seed list and the game settings are the dataset.

A manifest in `manifests/<name>.toml` holds a single-scene manifest's keys (generator,
seed_start, count, grounds, pieces) plus the sequencer version, plies per game and the
share of frames with a hand; sequence i is seed `seed_start + i`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from training.render.datasets import Dataset, ManifestError, cache_root, load_manifest

MANIFESTS = Path(__file__).with_name("manifests")
#: Bump when what a sequence seed draws or how its frames are made changes.
SEQUENCER_VERSION = "oanquan-sequence 1"


@dataclass(frozen=True)
class SequenceDataset:
    scenes: Dataset
    sequencer: str
    plies: int
    hands: float


def load_sequences(name: str, folder: Path = MANIFESTS) -> SequenceDataset:
    """Load and check a sequence manifest.

    Raises:
        ManifestError: missing, malformed, or a value out of range (the message names it).
    """
    ds = load_manifest(name, folder)
    d = tomllib.loads((folder / f"{name}.toml").read_text())
    try:
        out = SequenceDataset(ds, str(d["sequencer"]), int(d["plies"]), float(d["hands"]))
    except KeyError as e:
        raise ManifestError(f"{name}.toml: missing key {e}") from e
    except (TypeError, ValueError) as e:
        raise ManifestError(f"{name}.toml: {e}") from e
    check_settings(out.plies, out.hands, f"{name}.toml: ")
    return out


def check_settings(plies: int, hands: float, where: str = "") -> None:
    """Raises ManifestError unless 1 <= plies <= 200 and 0 <= hands <= 1."""
    if not 1 <= plies <= 200:
        raise ManifestError(f"{where}plies must be 1..200, got {plies}")
    if not 0.0 <= hands <= 1.0:
        raise ManifestError(f"{where}hands must be a share 0..1, got {hands}")


def sequences_dir(name: str) -> Path:
    """Where a sequence dataset goes: $OANQUAN_CACHE/sequences/<name>/sequence_NN/."""
    return cache_root() / "sequences" / name
