"""One definition of every journal record: the line format and each kind's data.

A record is one JSON line ``{"seq", "kind", "data", "crc"}``; ``crc`` is
``zlib.crc32`` of the canonical JSON of seq, kind and data, so a torn or
edited line is always noticed. The data of each kind is built only here
(the ``*_data`` functions), and the journal's helpers and the referee write
through them, so the keys written and the keys read cannot drift apart.
"""

from __future__ import annotations

import enum
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine import Move


class Kind(enum.StrEnum):
    """What a record says happened."""

    GAME = "game"
    MOVE = "move"
    UNDO = "undo"
    DISPUTE = "dispute"
    RESOLVE = "resolve"
    REFILL_DONE = "refill_done"
    END = "end"
    NOTE = "note"
    #: the operator reset the kiosk totals
    COUNTERS_RESET = "counters_reset"
    #: a scoring dispute settled by counting both sides' pieces (tally mode)
    TALLY = "tally"


class How(enum.StrEnum):
    """Who decided a move."""

    CAMERA = "camera"
    CONFIRMED = "confirmed"
    BUTTONS = "buttons"
    OVERRIDE = "override"


class CountedBy(enum.StrEnum):
    """Who counted one side's pieces in a tally."""

    CAMERA = "camera"
    #: the camera, and the players the squares it stayed unsure of
    CAMERA_HAND = "camera+hand"
    BUTTONS = "buttons"


class Mode(enum.StrEnum):
    CAMERA = "camera"
    MANUAL = "manual"


KINDS = tuple(k.value for k in Kind)
HOWS = tuple(h.value for h in How)
MODES = tuple(m.value for m in Mode)
COUNTED_BY = tuple(c.value for c in CountedBy)


def _canonical(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _crc(seq: int, kind: str, data: Mapping[str, Any]) -> int:
    payload = _canonical({"seq": seq, "kind": kind, "data": data})
    return zlib.crc32(payload.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Record:
    """One journal line. ``data`` is plain JSON; treat it as read-only."""

    seq: int
    kind: str
    data: dict[str, Any]

    @property
    def crc(self) -> int:
        return _crc(self.seq, self.kind, self.data)

    def to_line(self) -> bytes:
        """The exact bytes written: seq first for people reading the file, data canonical."""
        return (
            f'{{"seq":{self.seq},"kind":{_canonical(self.kind)},'
            f'"data":{_canonical(self.data)},"crc":{self.crc}}}\n'
        ).encode()

    @classmethod
    def from_line(cls, line: bytes) -> Record:
        """Parse and verify one line (without its newline); ValueError says what is wrong."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
        if not isinstance(obj, dict) or set(obj) != {"seq", "kind", "data", "crc"}:
            raise ValueError("not a journal record (keys must be seq, kind, data, crc)")
        seq, kind, data, crc = obj["seq"], obj["kind"], obj["data"], obj["crc"]
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise ValueError(f"bad seq {seq!r}")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"bad kind {kind!r}")
        if not isinstance(data, dict):
            raise ValueError("data is not a JSON object")
        if not isinstance(crc, int) or isinstance(crc, bool):
            raise ValueError(f"bad crc {crc!r}")
        try:
            actual = _crc(seq, kind, data)
        except ValueError as exc:
            raise ValueError(f"data cannot be re-encoded ({exc})") from None
        if actual != crc:
            raise ValueError(f"checksum mismatch (stored {crc}, computed {actual})")
        return cls(seq, kind, data)


# -- the data of each kind ------------------------------------------------------


def move_data(
    move: Move | str,
    *,
    ply: int,
    how: str,
    confidence: float | None = None,
    frame: str | None = None,
) -> dict[str, Any]:
    if how not in HOWS:
        raise ValueError(f"journal: how must be one of {', '.join(HOWS)}, got {how!r}")
    text = str(Move.parse(str(move)))
    conf = None if confidence is None else round(confidence, 4)
    return {"move": text, "ply": ply, "how": how, "confidence": conf, "frame": frame}


def undo_data(move: Move | str | None = None, *, ply: int | None = None) -> dict[str, Any]:
    return {"move": None if move is None else str(move), "ply": ply}


@dataclass(frozen=True, slots=True)
class DisputeData:
    """An open question or objection: what the screen showed, so a restart shows it again.

    ``kind`` is ``"ambiguous"`` (the players pick one of ``choices``) or the
    mistake the referee names; ``squares`` are (square, expected, seen).
    """

    kind: str
    move: str | None = None
    choices: tuple[str, ...] = ()
    squares: tuple[tuple[int, int, int], ...] = ()
    frame: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "move": self.move,
            "choices": list(self.choices),
            "squares": [list(s) for s in self.squares],
            "frame": self.frame,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DisputeData:
        """Read it back, tolerating records written before the shape was unified."""
        choices = data.get("choices") or data.get("candidates") or ()
        squares = data.get("squares") or ()
        return cls(
            str(data.get("kind") or "no legal move fits"),
            data.get("move") if isinstance(data.get("move"), str) else None,
            tuple(str(c) for c in choices),
            tuple((int(s), int(e), int(n)) for s, e, n in squares),
            data.get("frame") if isinstance(data.get("frame"), str) else None,
        )


def resolve_data(
    how: str, *, dispute: int | None = None, move: Move | str | None = None
) -> dict[str, Any]:
    return {"how": how, "dispute": dispute, "move": None if move is None else str(move)}


def refill_done_data(player: int | None = None, *, ply: int | None = None) -> dict[str, Any]:
    return {"player": player, "ply": ply}


def end_data(final: Sequence[int], reason: str, winner: int | None = None) -> dict[str, Any]:
    return {"final": list(final), "winner": winner, "reason": reason}


def tally_data(
    *,
    pieces: Sequence[int],
    intervals: Sequence[Sequence[int]],
    bigs: Sequence[int],
    how: Sequence[str],
    mandarin_value: int,
    debt: Sequence[int],
    sweep: Sequence[int] | None,
    scores: Sequence[int],
    winner: int | None,
    sure: bool,
    expected: int | None = None,
) -> dict[str, Any]:
    """Both sides' counted pieces (``CountedBy``) and the final count made of them;
    ``expected`` is what both heaps should hold together by the game, when it is known."""
    for name, value in (("how", how), ("pieces", pieces), ("bigs", bigs), ("scores", scores)):
        if len(value) != 2:
            raise ValueError(f"journal: tally {name} needs one value per player, got {value!r}")
    if any(h not in COUNTED_BY for h in how):
        raise ValueError(
            f"journal: tally how must be one of {', '.join(COUNTED_BY)}, got {list(how)!r}"
        )
    return {
        "pieces": [int(n) for n in pieces],
        "intervals": [[int(lo), int(hi)] for lo, hi in intervals],
        "bigs": [int(n) for n in bigs],
        "how": [str(h) for h in how],
        "mandarin_value": int(mandarin_value),
        "debt": [int(n) for n in debt],
        "sweep": None if sweep is None else [int(n) for n in sweep],
        "scores": [int(n) for n in scores],
        "winner": winner,
        "sure": bool(sure),
        "expected": expected,
    }


class RecordWriter:
    """The typed helpers every journal writes through: one per kind.

    A subclass provides :meth:`append` (the durable write) and
    :meth:`record_time`; tests subclass it with a list.
    """

    def append(self, kind: str, data: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def record_time(self) -> float | None:
        return None

    def _add(self, kind: Kind, data: dict[str, Any]) -> Any:
        return self.append(kind.value, {**data, "time": self.record_time()})

    def move(
        self,
        move: Move | str,
        *,
        ply: int,
        how: str,
        confidence: float | None = None,
        frame: str | None = None,
    ) -> Any:
        data = move_data(move, ply=ply, how=how, confidence=confidence, frame=frame)
        return self._add(Kind.MOVE, data)

    def undo(self, move: Move | str | None = None, *, ply: int | None = None) -> Any:
        return self._add(Kind.UNDO, undo_data(move, ply=ply))

    def dispute(self, question: DisputeData) -> Any:
        return self._add(Kind.DISPUTE, question.to_data())

    def resolve(
        self, how: str, *, dispute: int | None = None, move: Move | str | None = None
    ) -> Any:
        return self._add(Kind.RESOLVE, resolve_data(how, dispute=dispute, move=move))

    def refill_done(self, player: int | None = None, *, ply: int | None = None) -> Any:
        return self._add(Kind.REFILL_DONE, refill_done_data(player, ply=ply))

    def end(self, final: Sequence[int], reason: str, winner: int | None = None) -> Any:
        return self._add(Kind.END, end_data(final, reason, winner))

    def note(self, text: str) -> Any:
        return self._add(Kind.NOTE, {"text": text})

    def counters_reset(self) -> Any:
        """The operator reset the kiosk totals: they start again from zero, restarts included."""
        return self._add(Kind.COUNTERS_RESET, {})

    def tally(
        self,
        *,
        pieces: Sequence[int],
        intervals: Sequence[Sequence[int]],
        bigs: Sequence[int],
        how: Sequence[str],
        mandarin_value: int,
        debt: Sequence[int],
        sweep: Sequence[int] | None,
        scores: Sequence[int],
        winner: int | None,
        sure: bool,
        expected: int | None = None,
    ) -> Any:
        """A settled scoring dispute: what each side counted and the final count."""
        data = tally_data(
            pieces=pieces,
            intervals=intervals,
            bigs=bigs,
            how=how,
            mandarin_value=mandarin_value,
            debt=debt,
            sweep=sweep,
            scores=scores,
            winner=winner,
            sure=sure,
            expected=expected,
        )
        return self._add(Kind.TALLY, data)
