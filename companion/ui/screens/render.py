"""Pure screen renderers: a screen value and a language in, a 128x64 mode "1" image out.

No renderer touches hardware, time or randomness, so the same value always
gives the same pixels (golden tests) and the app can redraw only when its
state changes. :func:`render_screen` dispatches on the screen type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from PIL import Image, ImageDraw

from companion.ui.screens import draw as d
from companion.ui.screens.i18n import (
    CATALOGUE,
    Lang,
    arrow,
    move_code,
    side,
    square_name,
    text,
)
from companion.ui.screens.model import (
    AttractScreen,
    BoardScreen,
    BoardView,
    CalibrateScreen,
    CalibrateStep,
    ConfirmScreen,
    CycleScreen,
    DisputeScreen,
    ErrorScreen,
    GameOverScreen,
    HintScreen,
    IdleScreen,
    MenuScreen,
    MovePreview,
    MoveScreen,
    NewGameScreen,
    OperatorScreen,
    RefillScreen,
    RefillView,
    ReplayScreen,
    RulesScreen,
    ScoresScreen,
    Screen,
    TallyCountScreen,
    TallyEntryScreen,
    TallyFinalScreen,
    TallyGuideScreen,
    TallyHandScreen,
)

#: Text rows under the board: two lines of the 13 px font.
LINE1: Final = d.BELOW_BOARD
LINE2: Final = LINE1 + 13

#: Largest pixel shift of the attract screen in x and y (its layout keeps this margin).
ATTRACT_SHIFT: Final = (2, 1)

RULES_PAGES: Final = 4


def _canvas() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = d.new_image()
    return image, ImageDraw.Draw(image)


# --- game screens -------------------------------------------------------------------


def _under_board(draw: ImageDraw.ImageDraw, view: BoardView, *lines: str) -> None:
    """Text lines under the board, as many as fit (four seats leave room for one)."""
    y = d.text_top(view)
    for line in lines[: d.text_rows(view)]:
        if line:
            d.text(draw, (0, y), line)
        y += 13


def _debtor(view: BoardView) -> int | None:
    """Who is named as owing beside the turn: two seats, whoever owes the other (net);
    four seats (one text line), the seat to move if it owes."""
    if view.players == 2:
        owing = [p for p in (0, 1) if view.owed(p) > 0]
        return owing[0] if owing else None
    if view.players == 3:
        return None  # the second line names every seat that owes
    return view.to_move if view.owed(view.to_move) > 0 else None


def board_text(view: BoardView, lang: Lang) -> tuple[str, str, str]:
    """What the board screen says: the turn, the second line, and the debt named beside
    the turn ("" when none). Two seats: the second line is the points in each heap
    (captured pebbles + quan) and a debt is named, never netted into a negative score;
    three seats: every seat that owes."""
    turn = text("turn", lang, p=side(view.to_move))
    debtor = _debtor(view)
    debt = "" if debtor is None else text("debt", lang, p=side(debtor), o=view.owed(debtor))
    second = _score_line(view, lang) if view.players == 2 else _debts_line(view, lang)
    return turn, second, debt


def render_board(screen: BoardScreen, lang: Lang) -> Image.Image:
    """Board, whose turn, the points in each heap and any debt: the screen players see most."""
    image, draw = _canvas()
    view = screen.board
    d.board(draw, view)
    turn, second, debt = board_text(view, lang)
    if debt:
        d.right(draw, d.WIDTH, d.text_top(view), debt)
    _under_board(draw, view, turn, second)
    return image


def _score_line(view: BoardView, lang: Lang) -> str:
    return text("score_line", lang, p=side(0), a=view.held(0), q=side(1), b=view.held(1))


def _debts_line(view: BoardView, lang: Lang) -> str:
    """Three seats: every seat that owes, with how much ("Nợ: P0 5 · P2 3"); blank if none."""
    owing = [(p, view.owed(p)) for p in range(view.players) if view.owed(p) > 0]
    if not owing:
        return ""
    return text("debts", lang, who=" · ".join(f"{side(p)} {n}" for p, n in owing))


def describe_move(preview: MovePreview, lang: Lang, players: int = 2) -> str:
    """One line: the move as the journal writes it, its arrow on screen, what it takes:
    "3+ → ăn 7"."""
    fields = {
        "mv": move_code(preview.square, preview.direction),
        "arrow": arrow(preview.square, preview.direction, players),
    }
    if not preview.captures:
        return text("move.nothing", lang, **fields)
    key = "move.take_quan" if preview.takes_quan else "move.take"
    return text(key, lang, n=preview.gain, **fields)


def _screen_way(square: int, direction: int, players: int) -> int:
    return 1 if arrow(square, direction, players) == "→" else -1


def _move_marks(view: BoardView, p: MovePreview) -> d.Marks:
    """A move lit on the board: its square and arrow, the squares sown, captures framed."""
    return d.Marks(
        inverted=frozenset({p.square}),
        path=frozenset(p.path) - {p.square},
        captured=frozenset(p.captures),
        arrow=(p.square, _screen_way(p.square, p.direction, view.players)),
    )


def render_move(screen: MoveScreen, lang: Lang) -> Image.Image:
    """Cursor on a legal move, with the keys to browse and choose."""
    image, draw = _canvas()
    view = screen.board
    d.board(draw, view, _move_marks(view, screen.preview))
    line = describe_move(screen.preview, lang, view.players)
    _under_board(draw, view, line, text("move.keys", lang))
    return image


def render_hint(screen: HintScreen, lang: Lang) -> Image.Image:
    """A suggested move drawn like the cursor, with why it is good (or the companion's own move)."""
    image, draw = _canvas()
    view = screen.board
    d.board(draw, view, _move_marks(view, screen.preview))
    if screen.own:
        why = text("ai.own", lang)
    elif screen.reason == "prevent":
        nxt = (view.to_move + 1) % view.players
        why = text("hint.prevent", lang, q=side(nxt), n=screen.amount)
    elif screen.reason == "gain":
        why = text("hint.gain", lang, n=screen.amount)
    else:
        why = text("hint.quiet", lang)
    _under_board(draw, view, describe_move(screen.preview, lang, view.players), why)
    return image


def render_operator(screen: OperatorScreen, lang: Lang) -> Image.Image:
    """The operator menu under a title line with the exhibit's counters."""
    menu = MenuScreen(screen.items, screen.selected, "menu.title")
    image = render_menu(menu, lang)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, d.WIDTH - 1, 12), fill=0)
    d.text(draw, (0, 0), text("operator.title", lang, g=screen.games, d=screen.disputes))
    return image


def render_scores(screen: ScoresScreen, lang: Lang) -> Image.Image:
    """A table: captured pebbles, big stones, debts and the score so far, per player."""
    if screen.board.players != 2:
        return _ring_scores(screen.board, lang)
    image, draw = _canvas()
    view = screen.board
    col_a, col_b = 84, 120  # centres of the two player columns
    d.text(draw, (0, 0), text("scores.title", lang))
    for col, player in ((col_a, 0), (col_b, 1)):
        d.centred(draw, 0, side(player), x0=col - 15, x1=col + 15)
    draw.line((0, 13, d.WIDTH - 1, 13), fill=1)
    rows = (
        ("scores.store", view.store),
        ("scores.bigs", view.bigs),
        ("scores.debt", view.debt),
        ("scores.total", (view.points(0), view.points(1))),
    )
    for i, (key, values) in enumerate(rows):
        y = 15 + 12 * i
        d.text(draw, (0, y), text(key, lang))
        for col, value in zip((col_a, col_b), values, strict=True):
            d.centred(draw, y, str(value), x0=col - 15, x1=col + 15)
    return image


def _ring_scores(view: BoardView, lang: Lang) -> Image.Image:
    """Three or four seats: a column each: heap, borrowed, lent, the count now and the place."""
    image, draw = _canvas()
    n = view.players
    width = (d.WIDTH - 48) // n
    cols = [48 + width * p + width // 2 for p in range(n)]
    settled = [view.points(p) for p in range(n)]
    places = [1 + sum(o > mine for o in settled) for mine in settled]
    d.text(draw, (0, -1), text("scores.title", lang))
    for col, seat in zip(cols, range(n), strict=True):
        d.centred(draw, -1, side(seat), x0=col - 10, x1=col + 10)
    draw.line((0, 11, d.WIDTH - 1, 11), fill=1)
    rows = (
        ("scores.held", [view.held(p) for p in range(n)]),
        ("scores.borrowed", list(view.debt)),
        ("scores.lent", list(view.lent) if view.lent else [0] * n),
        ("scores.settled", settled),
        ("scores.place", places),
    )
    for i, (key, values) in enumerate(rows):
        y = 11 + 10 * i
        d.text(draw, (0, y), text(key, lang))
        for col, value in zip(cols, values, strict=True):
            d.centred(draw, y, str(value), x0=col - 10, x1=col + 10)
    return image


def _refill_notes(r: RefillView) -> tuple[tuple[int, str], ...]:
    """What each heap gives for the refill: the refiller's own pebbles and each lender's."""
    notes = [(r.player, f"-{r.own}")] if r.own else []
    return (*notes, *((seat, f"-{n}") for seat, n in r.lenders if n))


def render_refill(screen: RefillScreen, lang: Lang) -> Image.Image:
    """R11: the empty row shows "+1" on each square; the text says what to take from whom.

    Three or four seats: each heap that gives pebbles shows "-n" in its
    column (the refiller's own and every lender's), the text the totals.
    """
    image, draw = _canvas()
    r = screen.refill
    view = screen.board
    if view.players != 2:
        row = tuple(d.squares_of(r.player, view.players))
        marks = d.Marks(
            inverted=frozenset(row),
            labels=tuple((sq, "+1") for sq in row),
            notes=_refill_notes(r),
        )
        d.board(draw, view, marks)
        how = text("refill.ring", lang, m=r.own, n=r.borrowed) if r.borrowed else ""
        if not how:
            how = text("refill.own", lang, n=5)
        _under_board(draw, view, text("refill.put", lang, p=side(r.player)), how)
        return image
    row = tuple(d.squares_of(r.player))
    marks = d.Marks(inverted=frozenset(row), labels=tuple((sq, "+1") for sq in row))
    d.board(draw, screen.board, marks)
    d.text(draw, (0, LINE1), text("refill.put", lang, p=side(r.player)))
    lender = side(1 - r.player)
    if r.borrowed == 0:
        how = text("refill.own", lang, n=5)
    elif r.own == 0:
        how = text("refill.borrow", lang, q=lender, n=r.borrowed)
    else:
        how = text("refill.own_borrow", lang, m=r.own, q=lender, n=r.borrowed)
    d.text(draw, (0, LINE2), how)
    return image


def render_dispute(screen: DisputeScreen, lang: Lang) -> Image.Image:
    """The square the camera disagrees about is lit; the text gives both counts."""
    image, draw = _canvas()
    dispute = screen.dispute
    d.board(draw, screen.board, d.Marks(inverted=frozenset({dispute.square})))
    _under_board(
        draw,
        screen.board,
        text("dispute.check", lang, where=square_name(dispute.square, lang)),
        text("dispute.counts", lang, e=dispute.expected, s=dispute.seen),
    )
    return image


def render_confirm(screen: ConfirmScreen, lang: Lang) -> Image.Image:
    """Two or three moves explain what the camera saw: list them, the chosen one lit."""
    image, draw = _canvas()
    title = "confirm.same" if screen.same_board else "confirm.title"
    d.band(draw, 0, text(title, lang), height=12)
    for i, move in enumerate(screen.candidates):
        y = 13 + 13 * i
        fg = 1
        if i == screen.selected:
            draw.rectangle((0, y, d.WIDTH - 1, y + 12), fill=1)
            fg = 0
        d.text(draw, (1, y), describe_move(move, lang), fill=fg)
    if len(screen.candidates) < 3:
        d.text(draw, (0, 51), text("confirm.keys", lang))
    return image


# --- menus and pages ------------------------------------------------------------------

MENU_ROWS: Final = 3


def render_menu(screen: MenuScreen, lang: Lang) -> Image.Image:
    """Title bar, three visible items around the selection, a scroll bar when there are more."""
    image, draw = _canvas()
    d.band(draw, 0, text(screen.title, lang), height=12)
    n = len(screen.items)
    first = max(0, min(screen.selected - 1, n - MENU_ROWS))
    for row, item in enumerate(screen.items[first : first + MENU_ROWS]):
        index = first + row
        y = 13 + 13 * row
        fg = 1
        if index == screen.selected:
            draw.rectangle((0, y, 123, y + 12), fill=1)
            fg = 0
        d.text(draw, (2, y), text(item.key, lang), fill=fg)
        if item.value is not None:
            d.right(draw, 122, y, text(item.value, lang), fill=fg)
    if n > MENU_ROWS:
        top, height = 13, 13 * MENU_ROWS - 1
        draw.line((126, top, 126, top + height), fill=1)
        y0 = top + height * first // n
        y1 = top + height * (first + MENU_ROWS) // n
        draw.rectangle((125, y0, 127, y1), fill=1)
    d.text(draw, (0, 51), text("menu.keys", lang))
    return image


def render_rules(screen: RulesScreen, lang: Lang) -> Image.Image:
    """One of the short rules pages with its page number."""
    if not 1 <= screen.page <= RULES_PAGES:
        raise ValueError(f"rules page must be 1..{RULES_PAGES}, got {screen.page!r}")
    image, draw = _canvas()
    d.lines(draw, (0, 0), text(f"rules.{screen.page}", lang))
    d.right(draw, d.WIDTH, 51, text("rules.page", lang, page=screen.page, pages=RULES_PAGES))
    return image


# --- errors, end, idle --------------------------------------------------------------


def _warning_icon(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    draw.polygon([(x + 9, y), (x + 18, y + 16), (x, y + 16)], outline=1, fill=1)
    draw.rectangle((x + 8, y + 5, x + 10, y + 10), fill=0)
    draw.rectangle((x + 8, y + 12, x + 10, y + 14), fill=0)


def render_error(screen: ErrorScreen, lang: Lang) -> Image.Image:
    """A friendly fault notice, never a stack trace: what happened and who to tell."""
    image, draw = _canvas()
    _warning_icon(draw, 1, 1)
    d.text(draw, (24, 3), text(f"error.{screen.kind}.title", lang))
    draw.line((0, 21, d.WIDTH - 1, 21), fill=1)
    body = text(f"error.{screen.kind}.body", lang).split("\n")
    if screen.mark:
        body.append(text("error.mark", lang))
    for i, line in enumerate(body):
        d.centred(draw, 26 + 13 * i, line)
    return image


def render_game_over(screen: GameOverScreen, lang: Lang) -> Image.Image:
    """Winner, final score in large digits, how the game ended and the sweep.

    Three or four seats: the ranking instead, two places per line.
    """
    image, draw = _canvas()
    r = screen.result
    if r.winner is None:
        headline = text("over.draw", lang)
    else:
        headline = text("over.win", lang, p=side(r.winner))
    d.centred(draw, 0, headline, "head")
    reason_key = f"over.reason.{r.reason}"
    if reason_key not in CATALOGUE:
        reason_key = "over.reason.other"
    if len(r.final) != 2:
        order = sorted(range(len(r.final)), key=lambda p: (r.places[p], p))
        for i, seat in enumerate(order):
            line = text("over.place", lang, i=r.places[seat], p=side(seat), n=r.final[seat])
            d.text(draw, (4 + 66 * (i // 2), 16 + 13 * (i % 2)), line)
        d.centred(draw, 44, text(reason_key, lang))
        return image
    score = d.scaled(f"{r.final[0]}:{r.final[1]}", "head")
    d.stamp(image, score, ((d.WIDTH - score.width) // 2, 12))
    d.text(draw, (0, 20), side(0))
    d.right(draw, d.WIDTH, 20, side(1))
    d.centred(draw, 37, text(reason_key, lang))
    if r.sweep is not None:
        sweep = text("over.sweep", lang, p=side(0), a=r.sweep[0], q=side(1), b=r.sweep[1])
        d.centred(draw, 50, sweep)
    return image


def render_cycle(screen: CycleScreen, lang: Lang) -> Image.Image:
    """The game keeps cycling: the count if it ended now, and each seat's agreement.

    Seats that agreed are lit; the bottom line asks the next one. BACK plays on.
    """
    image, draw = _canvas()
    d.band(draw, 0, text("cycle.title", lang), height=12)
    d.text(draw, (0, 13), text(f"cycle.{screen.kind}", lang))
    n = len(screen.final)
    per_row = 2 if n == 4 else n
    width = d.WIDTH // per_row
    for seat, score in enumerate(screen.final):
        x0, y = width * (seat % per_row), 26 + 13 * (seat // per_row)
        fg = 1
        if seat in screen.agreed:
            draw.rectangle((x0 + 1, y, x0 + width - 2, y + 12), fill=1)
            fg = 0
        line = text("cycle.final", lang, p=side(seat), n=score)
        d.centred(draw, y, line, x0=x0, x1=x0 + width, fill=fg)
    if n < 4:
        d.text(draw, (0, 39), text("cycle.back", lang))
    d.text(draw, (0, 51), text("cycle.ask", lang, p=side(screen.asking)))
    return image


def render_idle(screen: IdleScreen, lang: Lang) -> Image.Image:
    """Auto-reset warning with a big countdown."""
    image, draw = _canvas()
    d.centred(draw, 0, text("idle.title", lang), "head")
    digits = d.scaled(str(max(0, screen.seconds)), "head")
    d.stamp(image, digits, ((d.WIDTH - digits.width) // 2, 12))
    d.centred(draw, 50, text("idle.keys", lang))
    return image


def _mini_ring(draw: ImageDraw.ImageDraw, x: int, y: int, lit: int) -> None:
    """A small board (10x6 cells) with one square lit: the sowing hand going round."""
    w, h = 10, 6
    gx = x + 10
    for k in range(5):
        for row in range(2):
            box = (gx + k * w, y + row * h, gx + (k + 1) * w, y + (row + 1) * h)
            draw.rectangle(box, outline=1)
    draw.arc((x, y, x + 20, y + 2 * h), 90, 270, fill=1)
    draw.arc((gx + 5 * w - 10, y, gx + 5 * w + 10, y + 2 * h), 270, 90, fill=1)
    if lit % 6 == 0:
        cx = x + 5 if lit == 0 else gx + 5 * w + 4
        draw.rectangle((cx - 1, y + h - 1, cx + 2, y + h + 1), fill=1)
        return
    col, row = (lit - 1, 1) if lit < 6 else (11 - lit, 0)
    x0, y0 = gx + col * w, y + row * h
    draw.rectangle((x0 + 2, y0 + 2, x0 + w - 2, y0 + h - 2), fill=1)


def render_attract(screen: AttractScreen, lang: Lang = "vi") -> Image.Image:
    """Kiosk loop, bilingual whatever ``lang`` is (a visitor has not chosen yet).

    The layout keeps :data:`ATTRACT_SHIFT` pixels of margin, so any ``offset``
    within it moves everything without clipping: the app cycles offsets
    every few minutes against OLED burn-in.
    """
    dx, dy = screen.offset
    mx, my = ATTRACT_SHIFT
    if abs(dx) > mx or abs(dy) > my:
        raise ValueError(f"offset {screen.offset!r} beyond ±{mx}, ±{my}")
    big = Image.new("1", (d.WIDTH + 2 * mx, d.HEIGHT + 2 * my), 0)
    draw = ImageDraw.Draw(big)
    ox, oy = mx, my  # the 128x64 layout sits centred in the larger canvas
    if screen.page:
        key = "attract.history" if screen.page == 1 else "attract.saying"
        d.lines(draw, (ox, oy), text(key, lang))
        return big.crop((mx - dx, my - dy, mx - dx + d.WIDTH, my - dy + d.HEIGHT))
    title = d.scaled(text("attract.title", lang))
    d.stamp(big, title, (ox + (d.WIDTH - title.width) // 2, oy - 1))
    _mini_ring(draw, ox + 34, oy + 24, screen.frame % 12)
    d.centred(draw, oy + 37, text("attract.vi", lang), x0=ox, x1=ox + d.WIDTH)
    d.centred(draw, oy + 50, text("attract.en", lang), x0=ox, x1=ox + d.WIDTH)
    return big.crop((mx - dx, my - dy, mx - dx + d.WIDTH, my - dy + d.HEIGHT))


# --- a new game over one in progress ---------------------------------------------------


def _choice_rows(draw: ImageDraw.ImageDraw, rows: tuple[str, ...], selected: int) -> None:
    """Lines under a title band, the selected one lit (as the confirm screen lists moves)."""
    for i, line in enumerate(rows):
        y = 13 + 13 * i
        fg = 1
        if i == selected:
            draw.rectangle((0, y, d.WIDTH - 1, y + 12), fill=1)
            fg = 0
        d.text(draw, (2, y), line, fill=fg)


def render_new_game(screen: NewGameScreen, lang: Lang) -> Image.Image:
    """Keep the game or start anew; "keep" comes first so a stray OK keeps it."""
    image, draw = _canvas()
    d.band(draw, 0, text("newgame.title", lang), height=12)
    _choice_rows(draw, (text("newgame.keep", lang), text("newgame.wipe", lang)), screen.selected)
    if screen.ply:
        d.text(draw, (2, 39), text("newgame.ply", lang, n=screen.ply))
    d.text(draw, (0, 51), text("confirm.keys", lang))
    return image


# --- tally mode ---------------------------------------------------------------------------


def render_calibrate(screen: CalibrateScreen, lang: Lang) -> Image.Image:
    """One step of marking the board's corners: what to do, then which key does it."""
    image, draw = _canvas()
    step = screen.step
    title = "calibrate.title"
    if step in (CalibrateStep.BARE, CalibrateStep.PLACE):
        title = f"calibrate.title_{step}"
    d.band(draw, 0, text(title, lang), height=12)
    if step == CalibrateStep.FAILED:
        assert screen.problem is not None
        body = text(f"calibrate.{screen.problem}", lang, n=screen.seen)
    elif step in (CalibrateStep.DONE, CalibrateStep.FORGOTTEN) and not screen.saved:
        body = text(f"calibrate.{step}_unsaved", lang)
    else:
        body = text(f"calibrate.{step}", lang)
    d.lines(draw, (0, 13), body)
    if step in (CalibrateStep.BARE, CalibrateStep.PLACE):
        keys = "calibrate.waiting" if screen.waiting else "calibrate.keys"
    elif step == CalibrateStep.FAILED:
        keys = "calibrate.again_keys"
    else:
        keys = "calibrate.ok_keys"
    d.text(draw, (0, 51), text(keys, lang))
    return image


def render_tally_guide(screen: TallyGuideScreen, lang: Lang) -> Image.Image:
    """How to spread one side's pieces so the camera can count them exactly."""
    image, draw = _canvas()
    p = side(screen.player)
    d.band(draw, 0, text("tally.title", lang, p=p), height=12)
    d.lines(draw, (0, 13), text("tally.guide", lang, p=p))
    key = "tally.counting" if screen.counting else "tally.keys"
    d.text(draw, (0, 51), text(key, lang))
    return image


def render_tally_count(screen: TallyCountScreen, lang: Lang) -> Image.Image:
    """The spread as counted on the board, the unsure squares lit, the total with its interval."""
    image, draw = _canvas()
    t = screen.tally
    d.board(draw, t.board, d.Marks(inverted=frozenset(t.unsure)))
    p = side(screen.player)
    if t.low == t.high:
        line = text("tally.exact", lang, p=p, t=t.total)
    else:
        line = text("tally.result", lang, p=p, t=t.total, lo=t.low, hi=t.high)
    d.text(draw, (0, LINE1), line)
    keys = "tally.sure_keys"
    if t.unsure:
        keys = "tally.spread_keys" if t.spread else "tally.unsure"
    d.text(draw, (0, LINE2), text(keys, lang))
    return image


def render_tally_hand(screen: TallyHandScreen, lang: Lang) -> Image.Image:
    """A lit square counted by hand: the board with that square's count lit, which one of
    how many, and the keys."""
    image, draw = _canvas()
    d.board(draw, screen.tally.board, d.Marks(inverted=frozenset({screen.square})))
    d.text(draw, (0, LINE1), text("hand.title", lang, i=screen.index + 1, n=screen.of))
    d.text(draw, (0, LINE2), text("entry.keys", lang))
    return image


def _digit_box(draw: ImageDraw.ImageDraw, x: int, y: int, digit: str, lit: bool) -> None:
    """One digit in a 10x14 box, lit (dark digit on a lit box) when it is the one to change."""
    fg = 1
    if lit:
        draw.rectangle((x, y, x + 9, y + 13), fill=1)
        fg = 0
    else:
        draw.rectangle((x, y, x + 9, y + 13), outline=1)
    d.text(draw, (x + 2, y + 1), digit, fill=fg)


def render_tally_entry(screen: TallyEntryScreen, lang: Lang) -> Image.Image:
    """Counting by hand: tens, units and big stones, the one being changed lit."""
    image, draw = _canvas()
    d.band(draw, 0, text("entry.title", lang, p=side(screen.player)), height=12)
    tens, units = divmod(screen.pieces, 10)
    d.text(draw, (0, 16), text("entry.pieces", lang))
    _digit_box(draw, 52, 15, str(tens), screen.field == "tens")
    _digit_box(draw, 63, 15, str(units), screen.field == "units")
    d.text(draw, (0, 33), text("scores.bigs", lang))
    _digit_box(draw, 52, 32, str(screen.bigs), screen.field == "bigs")
    points = screen.pieces + screen.bigs * screen.mandarin_value
    d.text(draw, (64, 33), text("entry.points", lang, n=points))
    d.text(draw, (0, 51), text("entry.keys", lang))
    return image


def _table(
    draw: ImageDraw.ImageDraw, title: str, rows: tuple[tuple[str, tuple[str, ...]], ...]
) -> None:
    """A title with the A and B column heads, then up to four label + two value rows."""
    col_a, col_b = 84, 120
    d.text(draw, (0, 0), title)
    for col, player in ((col_a, 0), (col_b, 1)):
        d.centred(draw, 0, side(player), x0=col - 15, x1=col + 15)
    draw.line((0, 13, d.WIDTH - 1, 13), fill=1)
    for i, (label, values) in enumerate(rows):
        y = 15 + 12 * i
        d.text(draw, (0, y), label)
        for col, value in zip((col_a, col_b), values, strict=True):
            d.centred(draw, y, value, x0=col - 15, x1=col + 15)


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def render_tally_final(screen: TallyFinalScreen, lang: Lang) -> Image.Image:
    """The final count: who wins, and how each side's total is made (two pages)."""
    image, draw = _canvas()
    f = screen.final
    both = (0, 1)
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    if screen.page == 0:
        if f.off_by > 0:
            title = text("final.short", lang, n=f.off_by)
        elif f.off_by < 0:
            title = text("final.extra", lang, n=-f.off_by)
        elif not f.sure:
            title = text("final.close", lang)
        elif f.winner is None:
            title = text("final.draw", lang)
        else:
            title = text("final.win", lang, p=side(f.winner))
        rows = (
            (text("final.pieces", lang), tuple(str(f.pieces[p]) for p in both)),
            (text("scores.bigs", lang), tuple(str(f.bigs[p] * f.mandarin_value) for p in both)),
            (
                text("final.debt", lang),
                tuple(_signed(f.debt[1 - p] - f.debt[p]) for p in both),
            ),
            (text("final.total", lang), tuple(str(f.scores[p]) for p in both)),
        )
    else:
        title = text("final.detail", lang)
        sweep = f.sweep
        rows = (
            (
                text("final.sweep", lang),
                tuple("-" if sweep is None else str(sweep[p]) for p in both),
            ),
            (
                text("final.captured", lang),
                tuple("-" if sweep is None else str(f.pieces[p] - sweep[p]) for p in both),
            ),
            (text("final.owed", lang), tuple(_signed(-f.debt[p]) for p in both)),
            (text("final.repaid", lang), tuple(_signed(f.debt[1 - p]) for p in both)),
        )
    _table(draw, title, rows)
    if screen.page == 0 and f.winner is not None and f.sure and not f.off_by:
        col = 84 if f.winner == 0 else 120
        y = 15 + 12 * 3
        draw.rectangle((col - 15, y, col + 15, y + 11), outline=1)
    return image


# --- replay of the last move -------------------------------------------------------------


def render_replay(screen: ReplayScreen, lang: Lang) -> Image.Image:
    """One step of the last move on the board: the square it touches lit, what happened."""
    image, draw = _canvas()
    step = screen.step
    lit = frozenset() if step.square is None else frozenset({step.square})
    marks = d.Marks(inverted=lit)
    if step.kind == "refill":
        marks = d.Marks(inverted=frozenset(d.squares_of(step.player)))
    elif step.kind == "capture":
        marks = d.Marks(captured=lit)
    d.board(draw, step.board, marks)
    m = screen.move
    fields: dict[str, object] = {}
    if step.kind == "start":
        fields.update(mv=move_code(m.square, m.direction), arrow=arrow(m.square, m.direction))
    elif step.kind == "refill":
        fields.update(p=side(step.player))
    elif step.kind != "end":
        assert step.square is not None
        fields.update(sq=step.square, c=step.count)
    d.text(draw, (0, LINE1), text(f"replay.{step.kind}", lang, **fields))
    if step.kind == "capture" and step.big:
        d.text(draw, (0, LINE2), text("replay.quan", lang))
    else:
        d.text(draw, (0, LINE2), text("replay.hand", lang, h=step.hand))
    d.right(draw, d.WIDTH, LINE2, text("replay.step", lang, i=screen.index + 1, k=screen.steps))
    return image


# --- dispatch -----------------------------------------------------------------------

_RENDERERS: Final[dict[type[Any], Callable[[Any, Lang], Image.Image]]] = {
    BoardScreen: render_board,
    MoveScreen: render_move,
    ScoresScreen: render_scores,
    RefillScreen: render_refill,
    DisputeScreen: render_dispute,
    ConfirmScreen: render_confirm,
    MenuScreen: render_menu,
    RulesScreen: render_rules,
    ErrorScreen: render_error,
    GameOverScreen: render_game_over,
    AttractScreen: render_attract,
    IdleScreen: render_idle,
    HintScreen: render_hint,
    OperatorScreen: render_operator,
    CalibrateScreen: render_calibrate,
    TallyGuideScreen: render_tally_guide,
    TallyCountScreen: render_tally_count,
    TallyHandScreen: render_tally_hand,
    TallyEntryScreen: render_tally_entry,
    TallyFinalScreen: render_tally_final,
    ReplayScreen: render_replay,
    NewGameScreen: render_new_game,
    CycleScreen: render_cycle,
}


def render_screen(screen: Screen, lang: Lang) -> Image.Image:
    """Render any screen value: the one call the app's display loop needs."""
    try:
        renderer = _RENDERERS[type(screen)]
    except KeyError:
        raise TypeError(f"not a screen: {screen!r}") from None
    return renderer(screen, lang)
