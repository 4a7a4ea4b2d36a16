"""bench/tally.py caches the boards it locates in stills: the cache must follow the search."""

from __future__ import annotations

from dataclasses import replace

from bench.tally import _finder_tag
from vision.config import LocateConfig


def test_located_boards_are_cached_per_search_setting() -> None:
    # the key once held the finder's name, bars and network only, so boards located by
    # an older search were read back after the search changed
    shipped = LocateConfig()
    assert _finder_tag(shipped) == _finder_tag(LocateConfig())
    for changed in (
        replace(shipped, relabelled=0),
        replace(shipped, relabel_view=(0.45, 1.01)),
        replace(shipped, refine_candidates=3),
        replace(shipped, learned_min_quality=0.25),
    ):
        assert _finder_tag(changed) != _finder_tag(shipped)
