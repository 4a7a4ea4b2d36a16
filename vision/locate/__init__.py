"""Find the chalk board and its homography in a frame, one module per stage.

The search (``search.locate_board``) runs the stages in this order:

1. ``ridges``: a downscaled working copy and its polarity-free ridge map
   (log-luminance and chroma, step edges suppressed);
2. ``lines``: Hough lines of the dominant ridge directions;
3. ``evidence``: chalk evidence split by line direction, which every later
   stage samples;
4. ``quads``: hypotheses from two long and two short lines, ranked by the
   chalk round the quadrilateral they bound, x every template assignment;
5. ``strips``: hypotheses from dividers searched inside the strips between
   long-line pairs (short board lines lose global Hough votes to floor joints);
6. ``scoring``: a sparse-template prescreen, then the template score (chalk
   along the template minus chalk half a square away and past the ends);
7. ``refine``: greedy refinement of the best few fits' corners and arc depth;
8. ``sides``: the winner's four outer sides re-fitted to the chalk at full
   resolution (drawn boards are irregular; the rigid template is a few px off).

With ``LocateConfig.finder`` = learned, stage 1 is ``learned`` instead: the
board-line network's probability map given the ridge map's form, so tile
joints and mat prints, which the network does not mark, never become
hypotheses.

``outline`` holds the result type; ``verify`` the fixed-camera ``Locator``
that locates once and then only checks the outline, noticing a moved board.
"""

from vision.locate.evidence import direction_weights, evidence_maps
from vision.locate.learned import learned_ridges, line_probability
from vision.locate.lines import hough_families
from vision.locate.outline import Outline, manual_outline, outline_from_corners
from vision.locate.ridges import ridge_map, ridge_maps, thin_ridges
from vision.locate.search import locate_board
from vision.locate.sides import refine_sides
from vision.locate.verify import Fix, Located, Locator, support

__all__ = [
    "Fix",
    "Located",
    "Locator",
    "Outline",
    "direction_weights",
    "evidence_maps",
    "hough_families",
    "learned_ridges",
    "line_probability",
    "locate_board",
    "manual_outline",
    "outline_from_corners",
    "refine_sides",
    "ridge_map",
    "ridge_maps",
    "support",
    "thin_ridges",
]
