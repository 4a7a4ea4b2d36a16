"""Where the referee was when the journal stopped: a pure replay of its records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from companion.referee.records import Kind, Record
from engine import EngineError, Game, Move, Position, Rules


@dataclass(frozen=True, slots=True, eq=False)
class ResumeState:
    """Where the referee was when the journal stopped: replay this, show this.

    ``game`` is None until a ``game`` record exists. ``open_dispute`` is the
    last ``dispute`` not yet ended by a ``resolve`` (or by a later move, undo,
    end or new game), so a restart shows the same dispute screen.
    """

    game: Game | None
    game_record: Record | None
    mode: str | None
    open_dispute: Record | None
    refill_done: bool
    end: Record | None
    #: kiosk totals, including the archived games
    games: int
    disputes: int
    #: the last record taken into account (the resume stopped here if a move was illegal)
    applied_seq: int
    last_seq: int
    warnings: tuple[str, ...] = field(default=())


def _counters(records: Sequence[Record]) -> tuple[int, int]:
    """Games and disputes so far: the last game's carried totals plus what follows it.

    A dispute counts once however often its wording changes while it stays
    open (until a resolve, move, undo, end or new game), and a question
    between likely moves is no dispute: the same rule the operator screen
    counts by, so the totals it shows survive a restart.
    """
    games = disputes = 0
    open_dispute = False
    for record in records:
        if record.kind == Kind.GAME:
            carried = record.data.get("counters")
            if (
                isinstance(carried, dict)
                and _is_count(carried.get("games"))
                and _is_count(carried.get("disputes"))
            ):
                games, disputes = carried["games"], carried["disputes"]
            games += 1
            open_dispute = False
        elif record.kind == Kind.DISPUTE:
            if record.data.get("kind") != "ambiguous":
                disputes += 0 if open_dispute else 1
                open_dispute = True
        elif record.kind in (Kind.RESOLVE, Kind.MOVE, Kind.UNDO, Kind.END):
            open_dispute = False
        elif record.kind == Kind.COUNTERS_RESET:
            games = disputes = 0
    return games, disputes


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def resume(records: Sequence[Record]) -> ResumeState:
    """Replay records into the state to resume; pure, never raises for bad content.

    Only the last ``game`` record and what follows matter for the board; an
    illegal or unreadable move stops the replay at the last legal state, with a
    warning naming the record.
    """
    warnings: list[str] = []
    games, disputes = _counters(records)
    last_seq = records[-1].seq if records else 0
    index = max((i for i, r in enumerate(records) if r.kind == "game"), default=-1)
    if index < 0:
        if records:
            warnings.append(
                f"journal: {len(records)} record(s) from seq {records[0].seq} but no game record "
                "before them (its line deleted?): they cannot be replayed, a new game starts "
                "and they are kept in the archive"
            )
        return ResumeState(
            None,
            None,
            None,
            None,
            False,
            None,
            games,
            disputes,
            last_seq,
            last_seq,
            tuple(warnings),
        )
    header = records[index]
    try:
        rules = Rules.from_json(header.data.get("rules"))
        raw_start = header.data.get("start")
        start = Position.initial(rules) if raw_start is None else Position.from_json(raw_start)
    except EngineError as exc:
        warnings.append(
            f"journal seq {header.seq}: game record unreadable: {exc}; no game to resume"
        )
        return ResumeState(
            None,
            header,
            None,
            None,
            False,
            None,
            games,
            disputes,
            header.seq,
            last_seq,
            tuple(warnings),
        )
    mode = header.data.get("mode")
    game = Game(rules, start)
    dispute: Record | None = None
    refill_done = False
    end: Record | None = None
    applied = header.seq
    for record in records[index + 1 :]:
        kind, data = record.kind, record.data
        if kind == "move":
            try:
                game.play(Move.parse(data.get("move")))
            except EngineError as exc:
                later = last_seq - record.seq
                warnings.append(
                    f"journal seq {record.seq}: {exc}; resumed before it, {later} later record(s) ignored"
                )
                break
            ply = data.get("ply")
            if ply is not None and ply != len(game.moves):
                warnings.append(
                    f"journal seq {record.seq}: ply {ply!r}, but it is move {len(game.moves)}"
                )
            dispute, refill_done = None, False
        elif kind == "undo":
            if game.transitions:
                taken = game.undo()
                expected = data.get("move")
                if expected is not None and str(taken) != expected:
                    warnings.append(
                        f"journal seq {record.seq}: undo of {expected!r} took back {taken}"
                    )
                end = None
            else:
                warnings.append(
                    f"journal seq {record.seq}: undo with no move to take back; ignored"
                )
            dispute, refill_done = None, False
        elif kind == "dispute":
            dispute = record
        elif kind == "resolve":
            dispute = None
        elif kind == "refill_done":
            refill_done = True
        elif kind == "end":
            if not game.is_over:
                game.stop_and_count()
            outcome = game.outcome
            final = data.get("final")
            if outcome is not None and final is not None and list(outcome.final) != final:
                warnings.append(
                    f"journal seq {record.seq}: end says {final}, the moves give {list(outcome.final)}"
                )
            dispute, end = None, record
        elif kind not in (Kind.NOTE, Kind.COUNTERS_RESET):
            warnings.append(f"journal seq {record.seq}: unknown record kind {kind!r}; ignored")
        applied = record.seq
    return ResumeState(
        game,
        header,
        mode if isinstance(mode, str) else None,
        dispute,
        refill_done,
        end,
        games,
        disputes,
        applied,
        last_seq,
        tuple(warnings),
    )
