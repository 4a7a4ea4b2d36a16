"""The referee: pure game-side judgement, no camera and no hardware.

- :mod:`.state`: the state machine of one refereed game (:class:`Referee`);
- :mod:`.reconcile`: which legal move explains a reading;
- :mod:`.evidence`: the maths applied to a reading (pinning, bias, tally);
- :mod:`.change`: what each square's change since the trusted board says of a move;
- :mod:`.records`: the journal records the referee writes, defined once;
- :mod:`.advice` and :mod:`.ai`: hints and the companion's own moves.
"""

from companion.referee.state import (
    Accepted,
    JournalLike,
    Observation,
    Referee,
    RefereeConfig,
    RefereeState,
    Report,
    Weighing,
    half_turned,
)

__all__ = [
    "Accepted",
    "JournalLike",
    "Observation",
    "Referee",
    "RefereeConfig",
    "RefereeState",
    "Report",
    "Weighing",
    "half_turned",
]
