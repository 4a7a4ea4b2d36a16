"""The rules kernel for any number of seats (2-4) round the ring of :mod:`engine.ring`.

Same rules, same trace entries and the same calling conventions as
:mod:`engine.core`, generalised: the ring has ``6 * N`` squares, a mandarin
square every sixth, and turns pass from seat ``p`` to ``p + 1``. Two-player
games keep running on :mod:`engine.core`, whose hard-wired twelve squares are
what makes it fast; this kernel also runs N = 2, and a test plays both on
thousands of random games and demands identical results, so the two cannot
drift apart.

Refills with more than one possible lender (R11 for N seats): the shortfall
is taken from the lenders in the order ``Rules.lender`` gives, each lending
what it holds until the shortfall is covered; refilling is impossible when
the other seats together hold less than the shortfall. Each seat's debt
(borrowed) and credit (lent) are kept apart and settled at the final count.
"""

from __future__ import annotations

from typing import Final

from engine.core import (
    CHAIN_END,
    DOUBLE_EMPTY,
    LOOP,
    MANDARIN,
    QUAN_NON,
    STOPS,
    T_CAPTURE,
    T_END,
    T_PASS,
    T_PICK,
    T_REFILL,
    T_SOW,
    T_STOP,
    TraceEntry,
)
from engine.ring import Ring, ring
from engine.rules import Rules

__all__ = ["Config", "RingState", "legal_codes", "play", "settle", "sow", "start_turn"]

_CHOICE_STOP: Final = ("occupied", "always", "take_one")


class Config:
    """Rules and ring flattened to plain attributes for the loops."""

    __slots__ = (
        "any_time",
        "big_end",
        "both_dirs",
        "chain",
        "leftover",
        "legal_table",
        "lender",
        "max_plies",
        "n",
        "no_refill",
        "nxt",
        "quan_non_min",
        "refill",
        "ring",
        "rows",
        "rules",
        "runs",
        "size",
        "stop_mode",
        "sweep_split",
        "value",
    )

    def __init__(self, rules: Rules) -> None:
        r: Ring = ring(rules.players)
        self.rules = rules
        self.ring = r
        self.n = r.players
        self.size = size = r.num_squares
        self.rows = r.rows
        self.stop_mode = _CHOICE_STOP.index(rules.mandarin_stop)
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
        self.lender = rules.lender
        plus = tuple((i + 1) % size for i in range(size))
        minus = tuple((i - 1) % size for i in range(size))
        #: nxt[d] for d in (+1, -1): index 1 and index -1
        self.nxt = (plus, plus, minus)
        #: runs[d][p]: the squares a sowing from p in direction d drops into, in order
        self.runs = tuple(
            tuple(tuple((p + d * k) % size for k in range(1, size + 1)) for p in range(size))
            for d in (1, 1, -1)
        )
        table: list[tuple[tuple[int, ...], ...]] = []
        for row in r.rows:
            per_mask = []
            for m in range(32):
                squares = [sq for i, sq in enumerate(row) if m >> i & 1]
                if self.both_dirs:
                    per_mask.append(tuple(c for sq in squares for c in (sq, -sq)))
                else:
                    per_mask.append(tuple(squares))
            table.append(tuple(per_mask))
        self.legal_table = tuple(table)


class RingState:
    """A mutable position for this kernel; ``lent`` is what each seat has lent out."""

    __slots__ = (
        "b",
        "big",
        "bigs",
        "debt",
        "field_owner",
        "lent",
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
        lent: list[int],
        to_move: int,
        ply: int,
        taker: list[int | None],
        outcome: tuple[str, tuple[int, ...], int | None, tuple[int, ...], int] | None = None,
    ) -> None:
        self.b = b
        self.big = big
        self.store = store
        self.bigs = bigs
        self.debt = debt
        self.lent = lent
        self.to_move = to_move
        self.ply = ply
        self.taker = taker
        #: match play is two-player only; kept so both kernels' states read alike
        self.field_owner: tuple[int | None, ...] | None = None
        #: (reason, final, winner, sweep, unclaimed) once the game is over
        self.outcome = outcome

    def copy(self) -> RingState:
        return RingState(
            self.b[:],
            self.big[:],
            self.store[:],
            self.bigs[:],
            self.debt[:],
            self.lent[:],
            self.to_move,
            self.ply,
            self.taker[:],
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
            tuple(self.lent),
            self.to_move,
        )


def sow(
    b: list[int],
    big: list[int],
    start: int,
    d: int,
    cfg: Config,
    trace: list[TraceEntry] | None = None,
) -> tuple[int, int, int]:
    """Sowing and captures of one move (R4-R9) in place, round a ring of any size.

    Returns (captured pebbles, captured-stone mask, stop code); bit k of the
    mask is the stone of mandarin square ``6 * k``.
    """
    nxt = cfg.nxt[d]
    runs = cfg.runs[d]
    size = cfg.size
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
        if h >= size:
            laps, h = divmod(h, size)
            for i in range(size):
                b[i] += laps
            if not h:
                h = size  # the last pebble of a whole lap lands back on p itself
                for i in range(size):
                    b[i] -= 1
        run = runs[p]
        for i in run[:h]:
            b[i] += 1
        p = run[h - 1]
        n = nxt[p]
        if n % 6 == 0:
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
        if c % 6 == 0:
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
        if gap % 6 == 0:
            if b[gap] or big[gap // 6] or stop_mode == 1:
                return cap, mask, CHAIN_END
        elif b[gap]:
            return cap, mask, CHAIN_END


def legal_codes(st: RingState, cfg: Config) -> tuple[int, ...]:
    """Signed move codes of the side to move; empty when the game is over."""
    if st.outcome is not None:
        return ()
    b = st.b
    row = cfg.rows[st.to_move]
    mask = (
        (b[row[0]] > 0)
        | (b[row[1]] > 0) << 1
        | (b[row[2]] > 0) << 2
        | (b[row[3]] > 0) << 3
        | (b[row[4]] > 0) << 4
    )
    return cfg.legal_table[st.to_move][mask]


def _row_empty(b: list[int], row: tuple[int, ...]) -> bool:
    return not (b[row[0]] or b[row[1]] or b[row[2]] or b[row[3]] or b[row[4]])


def play(
    st: RingState, code: int, cfg: Config, trace: list[TraceEntry] | None = None
) -> tuple[int, int, int]:
    """Apply a move (unchecked) and everything after it until the next turn starts."""
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
        for k in range(cfg.n):
            if mask >> k & 1:
                st.bigs[p] += 1
                st.taker[k] = p
    st.ply += 1
    q = (p + 1) % cfg.n
    if not any(big) and (cfg.big_end or not any(b[m] for m in cfg.ring.mandarins)):
        st.to_move = q
        settle(st, cfg, "mandarins_taken", None, trace)
        return cap, mask, stop
    if cfg.any_time and _row_empty(b, cfg.rows[p]):
        refill(st, cfg, p, trace)
    st.to_move = q
    if _row_empty(b, cfg.rows[q]):
        start_turn(st, cfg, trace)
    if cfg.max_plies and st.ply >= cfg.max_plies and st.outcome is None:
        settle(st, cfg, "ply_limit", None, trace)
    return cap, mask, stop


def lenders(store: list[int], p: int, cfg: Config) -> list[int]:
    """The seats p may borrow from, in the order the rules ask them."""
    n = cfg.n
    order = [(p + i) % n for i in range(1, n)]
    if cfg.lender == "previous":
        order.reverse()
    elif cfg.lender == "most_captured":
        order.sort(key=lambda j: -store[j])  # stable: ties stay in turn order
    return order


def refill(st: RingState, cfg: Config, p: int, trace: list[TraceEntry] | None) -> bool:
    """Put one pebble on each of p's five squares if the rules allow it (R11)."""
    store = st.store
    loans: list[tuple[int, int]] = []
    if cfg.refill == "bank":
        own, borrowed = 5, 0
    else:
        own = min(5, max(store[p], 0))
        borrowed = 5 - own
        if borrowed:
            if cfg.refill == "own_only":
                return False
            available = sum(max(store[j], 0) for j in range(cfg.n) if j != p)
            if available < borrowed:
                return False
            short = borrowed
            for j in lenders(store, p, cfg):
                take = min(short, max(store[j], 0))
                if take:
                    loans.append((j, take))
                    short -= take
                if not short:
                    break
    store[p] -= own
    for j, take in loans:
        store[j] -= take
        st.lent[j] += take
    st.debt[p] += borrowed
    for sq in cfg.rows[p]:
        st.b[sq] += 1
    if trace is not None:
        trace.append((T_REFILL, p, own, borrowed, tuple(loans)))
    return True


def start_turn(st: RingState, cfg: Config, trace: list[TraceEntry] | None = None) -> None:
    """Start-of-turn processing (R3.1, R11, R12): refill, pass, or end the game.

    With ``no_refill=pass`` a stuck seat passes to the next; when every seat
    in turn is stuck, the game ends as R12.
    """
    for attempt in range(cfg.n):
        p = st.to_move
        if not _row_empty(st.b, cfg.rows[p]):
            return
        if refill(st, cfg, p, trace):
            return
        if cfg.no_refill == "pass" and attempt < cfg.n - 1:
            if trace is not None:
                trace.append((T_PASS, p))
            st.to_move = (p + 1) % cfg.n
            continue
        settle(st, cfg, "no_refill", p if cfg.no_refill == "lose" else None, trace)
        return


def settle(
    st: RingState,
    cfg: Config,
    reason: str,
    loser: int | None,
    trace: list[TraceEntry] | None = None,
) -> None:
    """The final count (R12, R14): sweep each side to its owner, leftovers, debts."""
    n = cfg.n
    r = cfg.ring
    b = st.b
    sweep = [0] * n
    unclaimed = 0
    if cfg.sweep_split:
        rest = sum(b[sq] for sq in r.citizens)
        share = rest // n
        sweep = [share] * n
        unclaimed += rest - n * share
    else:
        for p, row in enumerate(r.rows):
            sweep[p] += sum(b[sq] for sq in row)
    pool = 0
    for k, sq in enumerate(r.mandarins):
        left = b[sq]
        if st.big[k]:
            unclaimed += cfg.value + left
        elif left:
            taker = st.taker[k]
            if cfg.leftover == "taker" and taker is not None:
                sweep[taker] += left
            elif cfg.leftover == "split":
                pool += left
            else:
                unclaimed += left
    if pool:
        share = pool // n
        for p in range(n):
            sweep[p] += share
        unclaimed += pool - n * share
    store = st.store
    for p in range(n):
        store[p] += sweep[p]
    for i in range(cfg.size):
        b[i] = 0
    for k in range(n):
        st.big[k] = 0
    final = tuple(store[p] + cfg.value * st.bigs[p] - st.debt[p] + st.lent[p] for p in range(n))
    if loser is not None and n == 2:
        winner: int | None = 1 - loser
    else:
        best = max(final)
        winner = final.index(best) if final.count(best) == 1 else None
    st.outcome = (reason, final, winner, tuple(sweep), unclaimed)
    if trace is not None:
        trace.append((T_END, reason))
