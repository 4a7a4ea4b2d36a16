"""The rules as one fast kernel over mutable lists.

Both the checked API (:mod:`engine.play`) and the search run this code, so
there is exactly one implementation of the rules. The hot path avoids objects:
a move is a signed int (``+3`` is ``3+``, ``-9`` is ``9-``), the board is a
list, and events are recorded only when the caller passes a ``trace`` list
(one entry per pick-up, sowing run and capture, not per pebble).
"""

from __future__ import annotations

from typing import Final

from engine.rules import Rules

# Stop reasons, in the order of their codes.
STOPS: Final = ("chain_end", "mandarin", "double_empty", "quan_non", "loop")
CHAIN_END, MANDARIN, DOUBLE_EMPTY, QUAN_NON, LOOP = range(5)

# Trace entry kinds: (kind, ...) tuples.
T_PICK: Final = "pick"  # (T_PICK, square, n): lift n pebbles (relay, or one taken from a mandarin)
T_SOW: Final = "sow"  # (T_SOW, from_square, n, direction): drop n pebbles after from_square
T_CAPTURE: Final = "capture"  # (T_CAPTURE, square, pebbles, big)
T_STOP: Final = "stop"  # (T_STOP, reason)
T_REFILL: Final = "refill"  # (T_REFILL, player, own, borrowed)
T_PASS: Final = "pass"  # (T_PASS, player): cannot refill and passes (no_refill=pass)
T_END: Final = "end"  # (T_END, reason)

_PLUS: Final = tuple((i + 1) % 12 for i in range(12))
_MINUS: Final = tuple((i - 1) % 12 for i in range(12))
#: NEXT[d] for d in (+1, -1): index 1 and index -1 of this tuple.
NEXT: Final = (_PLUS, _PLUS, _MINUS)
#: RUNS[d][p]: the 12 squares a sowing from p in direction d drops into, in order.
RUNS: Final = tuple(
    tuple(tuple((p + d * k) % 12 for k in range(1, 13)) for p in range(12)) for d in (1, 1, -1)
)
ROW_SQUARES: Final = ((1, 2, 3, 4, 5), (7, 8, 9, 10, 11))

END_REASONS: Final = ("mandarins_taken", "no_refill", "repetition", "ply_limit")

TraceEntry = tuple[object, ...]


class Config:
    """Rules flattened to plain attributes for the hot loop."""

    __slots__ = (
        "any_time",
        "big_end",
        "both_dirs",
        "chain",
        "leftover",
        "legal_table",
        "max_plies",
        "no_refill",
        "quan_non_min",
        "refill",
        "rules",
        "stop_mode",
        "sweep_split",
        "value",
    )

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.stop_mode = ("occupied", "always", "take_one").index(rules.mandarin_stop)
        self.chain = rules.chain
        self.quan_non_min = rules.quan_non_min
        self.both_dirs = rules.direction == "both"
        self.refill = rules.refill
        self.any_time = rules.refill_timing == "any_time"
        self.no_refill = rules.no_refill
        self.big_end = rules.end_when == "big_captured"
        self.leftover = rules.leftover
        self.sweep_split = rules.sweep == "split"
        self.value = rules.mandarin_value
        self.max_plies = rules.max_plies
        table: list[tuple[int, ...]] = []
        for player in (0, 1):
            for m in range(32):
                squares = [6 * player + 1 + i for i in range(5) if m >> i & 1]
                if self.both_dirs:
                    table.append(tuple(c for sq in squares for c in (sq, -sq)))
                else:
                    table.append(tuple(squares))
        self.legal_table = tuple(table)


def sow(
    b: list[int],
    big: list[int],
    start: int,
    d: int,
    cfg: Config,
    trace: list[TraceEntry] | None = None,
) -> tuple[int, int, int]:
    """Play the sowing and capture phase of one move (R4-R9) in place.

    Returns (captured pebbles, captured-stone mask, stop code); bit 0 of the
    mask is the stone of square 0, bit 1 that of square 6. The stop reason
    is traced by the caller.
    """
    nxt = NEXT[d]
    runs = RUNS[d]
    stop_mode = cfg.stop_mode
    h = b[start]
    b[start] = 0
    if trace is not None:
        trace.append((T_PICK, start, h))
    p = start
    seen: set[tuple[tuple[int, ...], int]] | None = None
    while True:
        if trace is not None:
            trace.append((T_SOW, p, h, d))
        if h >= 12:
            laps, h = divmod(h, 12)
            for i in range(12):
                b[i] += laps
            if not h:
                h = 12  # the last pebble of a whole lap lands back on p itself
                for i in range(12):
                    b[i] -= 1
        run = runs[p]
        for i in run[:h]:
            b[i] += 1
        p = run[h - 1]
        n = nxt[p]
        if n == 0 or n == 6:
            k = n // 6
            if stop_mode == 0:
                if b[n] or big[k]:
                    return 0, 0, MANDARIN
            elif stop_mode == 1:
                return 0, 0, MANDARIN
            else:
                if b[n]:
                    # take_one: no termination proof exists, so guard against a loop.
                    if seen is None:
                        seen = set()
                    key = (tuple(b), n)
                    if key in seen:
                        return 0, 0, LOOP
                    seen.add(key)
                    b[n] -= 1
                    h = 1
                    p = n
                    if trace is not None:
                        trace.append((T_PICK, n, 1))
                    continue
                if big[k]:
                    return 0, 0, MANDARIN
            break
        h = b[n]
        if not h:
            break
        b[n] = 0
        p = n
        if trace is not None:
            trace.append((T_PICK, n, h))
    # Capture phase: n is an empty square.
    cap = 0
    mask = 0
    gap = n
    while True:
        c = nxt[gap]
        pc = b[c]
        if c == 0 or c == 6:
            k = c // 6
            bc = big[k]
            if not (pc or bc):
                return cap, mask, CHAIN_END if (cap or mask) else DOUBLE_EMPTY
            if bc and pc < cfg.quan_non_min:
                return cap, mask, QUAN_NON
            b[c] = 0
            if bc:
                big[k] = 0
                mask |= 1 << k
        else:
            if not pc:
                return cap, mask, CHAIN_END if cap else DOUBLE_EMPTY
            b[c] = 0
            bc = 0
        cap += pc
        if trace is not None:
            trace.append((T_CAPTURE, c, pc, bc))
        if not cfg.chain:
            return cap, mask, CHAIN_END
        gap = nxt[c]
        if gap == 0 or gap == 6:
            if b[gap] or big[gap // 6] or stop_mode == 1:
                return cap, mask, CHAIN_END
        elif b[gap]:
            return cap, mask, CHAIN_END


class State:
    """A mutable position for the kernel; :class:`engine.position.Position` is the value type."""

    __slots__ = (
        "b",
        "big",
        "bigs",
        "debt",
        "field_owner",
        "outcome",
        "ply",
        "store",
        "taker",
        "to_move",
    )

    def __init__(
        self,
        b: list[int],
        big: list[int],
        store: list[int],
        bigs: list[int],
        debt: list[int],
        to_move: int,
        ply: int,
        taker: list[int | None],
        field_owner: tuple[int | None, ...] | None = None,
        outcome: tuple[str, tuple[int, int], int | None, tuple[int, int], int] | None = None,
    ) -> None:
        self.b = b
        self.big = big
        self.store = store
        self.bigs = bigs
        self.debt = debt
        self.to_move = to_move
        self.ply = ply
        self.taker = taker
        self.field_owner = field_owner
        #: (reason, final, winner, sweep, unclaimed) once the game is over
        self.outcome = outcome

    def copy(self) -> State:
        return State(
            self.b[:],
            self.big[:],
            self.store[:],
            self.bigs[:],
            self.debt[:],
            self.to_move,
            self.ply,
            self.taker[:],
            self.field_owner,
            self.outcome,
        )

    def key(self) -> tuple[object, ...]:
        """Everything repetition compares: board, stones, stores, debts, side to move."""
        return (
            tuple(self.b),
            tuple(self.big),
            tuple(self.store),
            tuple(self.bigs),
            tuple(self.debt),
            self.to_move,
        )


def legal_codes(st: State, cfg: Config) -> tuple[int, ...]:
    """Signed move codes of the side to move; empty when the game is over.

    A table indexed by which of the five squares hold pebbles: this runs at
    every node of a search, so it avoids building a list square by square.
    """
    if st.outcome is not None:
        return ()
    b = st.b
    if st.to_move:
        mask = (b[7] > 0) | (b[8] > 0) << 1 | (b[9] > 0) << 2 | (b[10] > 0) << 3 | (b[11] > 0) << 4
        return cfg.legal_table[32 + mask]
    mask = (b[1] > 0) | (b[2] > 0) << 1 | (b[3] > 0) << 2 | (b[4] > 0) << 3 | (b[5] > 0) << 4
    return cfg.legal_table[mask]


def play(
    st: State, code: int, cfg: Config, trace: list[TraceEntry] | None = None
) -> tuple[int, int, int]:
    """Apply a move (unchecked) and everything that follows it until the next turn.

    Returns what :func:`sow` returns. After it, ``st`` is normalized: the
    next player's refill is done, or the game is over.
    """
    p = st.to_move
    b = st.b
    big = st.big
    if code > 0:
        cap, mask, stop = sow(b, big, code, 1, cfg, trace)
    else:
        cap, mask, stop = sow(b, big, -code, -1, cfg, trace)
    if trace is not None:
        trace.append((T_STOP, STOPS[stop]))
    if cap:
        st.store[p] += cap
    if mask:
        if mask & 1:
            st.bigs[p] += 1
            st.taker[0] = p
        if mask & 2:
            st.bigs[p] += 1
            st.taker[1] = p
    st.ply += 1
    q = 1 - p
    if not (big[0] or big[1]) and (cfg.big_end or not (b[0] or b[6])):
        st.to_move = q
        settle(st, cfg, "mandarins_taken", None, trace)
        return cap, mask, stop
    if cfg.any_time:
        row = ROW_SQUARES[p]
        if not (b[row[0]] or b[row[1]] or b[row[2]] or b[row[3]] or b[row[4]]):
            refill(st, cfg, p, trace)
    st.to_move = q
    if q:
        if not (b[7] or b[8] or b[9] or b[10] or b[11]):
            start_turn(st, cfg, trace)
    elif not (b[1] or b[2] or b[3] or b[4] or b[5]):
        start_turn(st, cfg, trace)
    if cfg.max_plies and st.ply >= cfg.max_plies and st.outcome is None:
        settle(st, cfg, "ply_limit", None, trace)
    return cap, mask, stop


def refill(st: State, cfg: Config, p: int, trace: list[TraceEntry] | None) -> bool:
    """Put one pebble on each of p's five squares if the rules allow it (R11)."""
    store = st.store
    if cfg.refill == "bank":
        own, borrowed = 5, 0
    else:
        own = min(5, max(store[p], 0))
        borrowed = 5 - own
        if borrowed and (cfg.refill == "own_only" or store[1 - p] < borrowed):
            return False
    store[p] -= own
    if borrowed:
        store[1 - p] -= borrowed
        st.debt[p] += borrowed
    for sq in ROW_SQUARES[p]:
        st.b[sq] += 1
    if trace is not None:
        trace.append((T_REFILL, p, own, borrowed))
    return True


def start_turn(st: State, cfg: Config, trace: list[TraceEntry] | None = None) -> None:
    """Start-of-turn processing (R3.1, R11, R12): refill, pass, or end the game."""
    for attempt in range(2):
        p = st.to_move
        b = st.b
        row = ROW_SQUARES[p]
        if b[row[0]] or b[row[1]] or b[row[2]] or b[row[3]] or b[row[4]]:
            return
        if refill(st, cfg, p, trace):
            return
        if cfg.no_refill == "pass" and attempt == 0:
            if trace is not None:
                trace.append((T_PASS, p))
            st.to_move = 1 - p
            continue
        settle(st, cfg, "no_refill", p if cfg.no_refill == "lose" else None, trace)
        return


def settle(
    st: State,
    cfg: Config,
    reason: str,
    loser: int | None,
    trace: list[TraceEntry] | None = None,
) -> None:
    """The final count (R12, R14, §V): sweep rows, settle leftovers and debts."""
    b = st.b
    sweep = [0, 0]
    unclaimed = 0
    if cfg.sweep_split:
        rest = sum(b[1:6]) + sum(b[7:12])
        half = rest // 2
        sweep = [half, half]
        unclaimed += rest - 2 * half
    else:
        owners = st.field_owner
        for sq in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11):
            n = b[sq]
            if not n:
                continue
            row_owner = 0 if sq < 6 else 1
            o = row_owner if owners is None else owners[sq]
            if o == 2:
                other = n // 2
                sweep[row_owner] += n - other
                sweep[1 - row_owner] += other
            else:
                sweep[row_owner if o is None else o] += n
    pool = 0
    for k, sq in ((0, 0), (1, 6)):
        n = b[sq]
        if st.big[k]:
            unclaimed += cfg.value + n
        elif n:
            taker = st.taker[k]
            if cfg.leftover == "taker" and taker is not None:
                sweep[taker] += n
            elif cfg.leftover == "split":
                pool += n
            else:
                unclaimed += n
    if pool:
        half = pool // 2
        sweep[0] += half
        sweep[1] += half
        unclaimed += pool - 2 * half
    store = st.store
    store[0] += sweep[0]
    store[1] += sweep[1]
    for i in range(12):
        b[i] = 0
    st.big[0] = st.big[1] = 0
    final = (
        store[0] + cfg.value * st.bigs[0] - st.debt[0] + st.debt[1],
        store[1] + cfg.value * st.bigs[1] - st.debt[1] + st.debt[0],
    )
    if loser is not None:
        winner: int | None = 1 - loser
    elif final[0] == final[1]:
        winner = None
    else:
        winner = 0 if final[0] > final[1] else 1
    st.outcome = (reason, final, winner, (sweep[0], sweep[1]), unclaimed)
    if trace is not None:
        trace.append((T_END, reason))
