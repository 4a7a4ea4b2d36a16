"""View models, the engine adapter and layout behaviour that goldens alone would not explain."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PIL import Image, ImageDraw

from companion.ui.screens import (
    ATTRACT_SHIFT,
    MAIN_MENU,
    START,
    AttractScreen,
    BoardScreen,
    BoardView,
    ConfirmScreen,
    Dispute,
    DisputeScreen,
    MenuScreen,
    MovePreview,
    MoveScreen,
    RefillView,
    RulesScreen,
    board_text,
    board_view,
    describe_move,
    game_over_view,
    render_attract,
    render_screen,
)
from companion.ui.screens import draw as d
from companion.ui.screens.i18n import SIDES, arrow, move_code, square_name, text


@dataclass(frozen=True)
class FakeOutcome:
    reason: str
    final: tuple[int, int]
    winner: int | None
    sweep: object


@dataclass(frozen=True)
class FakePosition:
    """Stands in for engine.position.Position: only the attributes the adapter reads."""

    board: tuple[int, ...] = (0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5)
    big: tuple[int, int] = (1, 1)
    store: tuple[int, int] = (0, 0)
    bigs: tuple[int, int] = (0, 0)
    debt: tuple[int, int] = (0, 0)
    to_move: int = 0
    ply: int = 0
    outcome: FakeOutcome | None = None

    @property
    def over(self) -> bool:
        return self.outcome is not None


def test_board_view_copies_plain_values() -> None:
    pos = FakePosition(
        board=(3, 0, 1, 2, 0, 0, 4, 1, 0, 0, 2, 7),
        big=(1, 0),
        store=(12, 8),
        bigs=(1, 0),
        debt=(0, 2),
        to_move=1,
        ply=22,
    )
    view = board_view(pos)
    assert view == BoardView(
        board=(3, 0, 1, 2, 0, 0, 4, 1, 0, 0, 2, 7),
        big=(1, 0),
        store=(12, 8),
        bigs=(1, 0),
        debt=(0, 2),
        to_move=1,
        ply=22,
    )
    assert board_view(FakePosition()) == START


def test_board_view_accepts_lists_as_from_json() -> None:
    pos = FakePosition(board=[0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5], big=[1, 1])  # type: ignore[arg-type]
    assert board_view(pos).board == START.board


def test_game_over_view() -> None:
    assert game_over_view(FakePosition()) is None
    done = FakePosition(outcome=FakeOutcome("mandarins_taken", (41, 29), 0, (4, 9)))
    result = game_over_view(done)
    assert result is not None
    assert (result.final, result.winner, result.sweep, result.reason) == (
        (41, 29),
        0,
        (4, 9),
        "mandarins_taken",
    )
    draw = FakePosition(outcome=FakeOutcome("no_refill", (35, 35), None, True))
    result = game_over_view(draw)
    assert result is not None and result.winner is None and result.sweep is None


def test_points_settle_debts_and_count_big_stones() -> None:
    view = BoardView(board=START.board, store=(7, 3), bigs=(1, 0), debt=(2, 0))
    assert view.points(0) == 7 + 10 - 2
    assert view.points(1) == 3 + 2


@pytest.mark.parametrize(
    "bad",
    [
        lambda: BoardView(board=(0,) * 11),
        lambda: BoardView(board=(0,) * 11 + (-1,)),
        lambda: BoardView(board=(0,) * 12, to_move=2),
        lambda: MovePreview(3, 0),
        lambda: MovePreview(24, 1),
        lambda: RefillView(0, 6),
        lambda: RefillView(0, 3, ((1, 2),)),  # lenders must add up to what was borrowed
        lambda: Dispute(24, 1, 2),
        lambda: BoardView(board=(0,) * 18),  # three seats need three stores, debts, stones
        lambda: BoardView(
            board=(0,) * 18, big=(1,) * 3, store=(0,) * 3, bigs=(0,) * 3, debt=(0,) * 3, to_move=3
        ),
        lambda: ConfirmScreen(()),
        lambda: ConfirmScreen((MovePreview(1, 1),), selected=1),
        lambda: MenuScreen(MAIN_MENU, selected=len(MAIN_MENU)),
    ],
)
def test_invalid_values_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


def test_squares_and_seats_are_named_as_the_terminal_and_journal_name_them() -> None:
    """Issue 19: one naming everywhere: seats P0..P3, squares by ring index, moves "3+"."""
    assert SIDES == ("P0", "P1", "P2", "P3")
    assert square_name(3, "en") == "square 3" and square_name(9, "vi") == "ô 9"
    assert square_name(0, "vi") == "ô quan 0"
    assert square_name(6, "en") == "quan 6"  # not "right quan": right for whom?
    assert square_name(18, "en") == "quan 18"
    assert (move_code(3, 1), move_code(9, -1)) == ("3+", "9-")
    for key in ("turn", "score_line", "over.win", "refill.put"):
        for lang in ("vi", "en"):
            assert " A " not in f" {text(key, lang, p='P0', q='P1', a=1, b=2)} ", key


def test_arrows_point_the_way_the_hand_moves_on_screen() -> None:
    # bottom row: + runs left to right; top row: + runs right to left (rules R1)
    assert (arrow(3, 1), arrow(3, -1)) == ("→", "←")
    assert (arrow(9, 1), arrow(9, -1)) == ("←", "→")
    # three or four seats: one row per seat from its owner's left, so + is always rightwards
    assert (arrow(13, 1, 3), arrow(9, -1, 4)) == ("→", "←")


def test_describe_move() -> None:
    assert describe_move(MovePreview(3, 1, captures=(4,), gain=6), "vi") == "3+ → ăn 6"
    quan = MovePreview(8, -1, captures=(6,), gain=17, takes_quan=True)
    assert describe_move(quan, "en") == "8- → takes 17 (quan)"
    assert describe_move(MovePreview(11, 1), "en") == "11+ ← no capture"
    assert describe_move(MovePreview(13, 1), "en", players=3) == "13+ → no capture"


def test_text_is_nfc() -> None:
    assert text("turn", "vi", p="P0") == "Lượt P0"


def test_unknown_language_is_an_error_not_english() -> None:
    with pytest.raises(ValueError):
        render_screen(BoardScreen(START), "fr")  # type: ignore[arg-type]


def _lit(image: Image.Image, box: tuple[int, int, int, int]) -> int:
    region = image.crop((box[0], box[1], box[2] + 1, box[3] + 1))
    return region.width * region.height - region.histogram()[0]


def test_two_digit_counts_keep_clear_of_cell_borders() -> None:
    """70 (every pebble) fits every citizen cell with a dark pixel on each side."""
    image = render_screen(BoardScreen(BoardView(board=(70,) * 12)), "en")
    for sq in (*range(1, 6), *range(7, 12)):
        x0, y0, x1, y1 = d.cell_box(sq)
        assert _lit(image, (x0 + 1, y0 + 1, x1 - 1, y0 + 1)) == 0, sq  # row under top border
        assert _lit(image, (x0 + 1, y0 + 1, x0 + 1, y1 - 1)) == 0, sq  # column right of left
        assert _lit(image, (x1 - 1, y0 + 1, x1 - 1, y1 - 1)) == 0, sq  # column left of right
        assert _lit(image, (x0 + 2, y0 + 2, x1 - 2, y1 - 2)) > 0, sq  # the digits themselves


def test_impossible_counts_are_flagged_not_clipped() -> None:
    assert d.count_label(70) == "70"
    assert d.count_label(100) == "!!"
    image = render_screen(BoardScreen(BoardView(board=(0, 123, *(0,) * 10))), "en")
    flagged = render_screen(BoardScreen(BoardView(board=(0, 99, *(0,) * 10))), "en")
    assert image.tobytes() != flagged.tobytes()


def test_cursor_lights_the_chosen_square_only() -> None:
    image = render_screen(MoveScreen(START, MovePreview(3, 1)), "vi")
    plain = render_screen(BoardScreen(START), "vi")
    lit = {sq: _lit(image, d.cell_box(sq)) for sq in (1, 2, 3, 4, 5)}
    assert lit[3] > _lit(plain, d.cell_box(3)) + 150
    assert all(lit[sq] == _lit(plain, d.cell_box(sq)) for sq in (1, 2, 4, 5))


def test_dispute_lights_the_disputed_square() -> None:
    plain = render_screen(BoardScreen(START), "vi")
    disputed = render_screen(DisputeScreen(START, Dispute(8, 5, 4)), "vi")
    assert _lit(disputed, d.cell_box(8)) > _lit(plain, d.cell_box(8)) + 150
    assert _lit(disputed, d.cell_box(9)) == _lit(plain, d.cell_box(9))


def test_menu_window_follows_the_selection() -> None:
    """Whatever is selected, its label is on screen, in the lit row."""
    for selected, item in enumerate(MAIN_MENU):
        image = render_screen(MenuScreen(MAIN_MENU, selected=selected), "en")
        label = text(item.key, "en")
        # lit row: at least one of the three item rows is mostly lit
        rows = [_lit(image, (0, 13 + 13 * r, 123, 25 + 13 * r)) for r in range(3)]
        assert max(rows) > 124 * 13 * 0.6, (selected, label)


def test_attract_offset_moves_everything_without_clipping() -> None:
    base = render_attract(AttractScreen(frame=3))
    dx, dy = ATTRACT_SHIFT
    for ox, oy in ((dx, dy), (-dx, -dy), (dx, -dy), (0, 0)):
        shifted = render_attract(AttractScreen(frame=3, offset=(ox, oy)))
        expected = Image.new("1", base.size, 0)
        expected.paste(base, (ox, oy))
        assert shifted.tobytes() == expected.tobytes(), (ox, oy)
        assert _lit(shifted, (0, 0, 127, 63)) == _lit(base, (0, 0, 127, 63))


def test_attract_refuses_offsets_beyond_its_margin() -> None:
    with pytest.raises(ValueError):
        render_attract(AttractScreen(offset=(ATTRACT_SHIFT[0] + 1, 0)))


def test_attract_animates() -> None:
    frames = {render_attract(AttractScreen(frame=f)).tobytes() for f in range(12)}
    assert len(frames) == 12
    assert render_attract(AttractScreen(frame=12)) == render_attract(AttractScreen(frame=0))


def test_rules_pages_are_bounded() -> None:
    with pytest.raises(ValueError):
        render_screen(RulesScreen(page=0), "vi")


def test_render_screen_rejects_non_screens() -> None:
    with pytest.raises(TypeError):
        render_screen(START, "vi")  # type: ignore[arg-type]


def test_board_names_a_debt_beside_the_points_never_nets_it() -> None:
    """Issue 19: A borrowed 2 with nothing captured read "A -2 - B 2"; now points and debt."""
    owing = BoardView(board=START.board, store=(0, 0), debt=(2, 0), ply=41)
    assert board_text(owing, "en") == ("P0's turn", "Score: P0 0 · P1 0", "P0 owes 2")
    assert board_text(owing, "vi") == ("Lượt P0", "Điểm: P0 0 · P1 0", "P0 nợ 2")
    # both borrowed: what is left to repay, net, by whoever owes
    both = BoardView(board=START.board, store=(3, 9), bigs=(1, 0), debt=(2, 5), to_move=1)
    assert board_text(both, "en") == ("P1's turn", "Score: P0 13 · P1 9", "P1 owes 3")
    assert both.points(0) == 16 and both.points(1) == 6  # the count now settles it
    assert board_text(START, "en")[2] == ""


def test_three_and_four_seats_name_every_seat_that_owes() -> None:
    three = BoardView(
        board=(0, 5, 5, 5, 5, 5) * 3,
        big=(1, 1, 1),
        store=(0, 4, 6),
        bigs=(0, 0, 0),
        debt=(5, 0, 0),
        lent=(0, 2, 3),
    )
    assert three.held(1) == 4 and three.owed(0) == 5 and three.owed(2) == -3
    assert board_text(three, "en") == ("P0's turn", "Owe: P0 5", "")
    four = BoardView(
        board=(0, 5, 5, 5, 5, 5) * 4,
        big=(1,) * 4,
        store=(0,) * 4,
        bigs=(0,) * 4,
        debt=(0, 0, 4, 0),
        to_move=2,
        lent=(4, 0, 0, 0),
    )
    # one line under four rows: the debt of the seat to move beside its turn
    assert board_text(four, "vi")[0::2] == ("Lượt P2", "P2 nợ 4")


def test_the_board_numbers_its_squares() -> None:
    """Each square carries its number (3x5 digits), the ones the terminal and journal use."""
    image = render_screen(BoardScreen(BoardView(board=(0,) * 12, big=(0, 0))), "en")
    for sq in (*range(1, 6), *range(7, 12)):
        x0, y0, _, _ = d.cell_box(sq)
        label = Image.new("1", (8, 5), 0)
        d.tiny(ImageDraw.Draw(label), (0, 0), str(sq))
        shown = image.crop((x0 + 2, y0 + 2, x0 + 10, y0 + 7))
        assert shown.tobytes() == label.tobytes(), sq
    left = image.crop((15, 29, 18, 34))
    assert left.getbbox() is not None  # "0" in the left quan


def test_ring_rows_follow_the_seats_and_light_the_mover() -> None:
    view = BoardView(
        board=(0, 5, 5, 5, 5, 5) * 3,
        big=(1, 1, 1),
        store=(0,) * 3,
        bigs=(0,) * 3,
        debt=(0,) * 3,
        to_move=1,
    )
    assert d.ring_box(0, 3)[1] == 0  # P0's quan on the top row
    assert d.ring_box(13, 3)[1] == d.RING_ROW  # P1 owns 13..17 (side 2): second row
    assert d.ring_box(7, 3)[1] == 2 * d.RING_ROW  # P2 owns 7..11: third row
    image = render_screen(BoardScreen(view), "en")
    lit = [_lit(image, (0, 12 * p + 1, 11, 12 * p + 11)) for p in range(3)]
    assert lit[1] > lit[0] + 40 and lit[1] > lit[2] + 40
