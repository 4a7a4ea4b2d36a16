"""Named example screens: the gallery's pages and the golden tests' inputs.

One list feeds both, so the README gallery always shows exactly what the
tests pin down. The two-seat positions are plausible mid-game states (70
points in total), not engine output, so the screens can be reviewed without
the engine; the three- and four-seat ones were taken from random engine
games (their move previews, like all previews, are checked against the
engine's dry runs in tests/screens/test_screens_engine.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from companion.ui.screens.model import (
    MAIN_MENU,
    OPERATOR_MENU,
    START,
    AttractScreen,
    BoardScreen,
    BoardView,
    CalibrateScreen,
    CalibrateStep,
    ConfirmScreen,
    CycleScreen,
    Dispute,
    DisputeScreen,
    ErrorKind,
    ErrorScreen,
    FinalView,
    GameOverScreen,
    HintScreen,
    IdleScreen,
    MarksProblem,
    MenuItem,
    MenuScreen,
    MovePreview,
    MoveScreen,
    NewGameScreen,
    OperatorScreen,
    RefillScreen,
    RefillView,
    ReplayScreen,
    ReplayStep,
    Result,
    RulesScreen,
    ScoresScreen,
    Screen,
    TallyCountScreen,
    TallyEntryScreen,
    TallyFinalScreen,
    TallyGuideScreen,
    TallyHandScreen,
    TallyView,
)

#: Mid-game, P1 to move: a quan already taken by P0, big counts on the board.
MIDGAME: Final = BoardView(
    board=(12, 0, 3, 14, 1, 0, 0, 2, 0, 7, 1, 0),
    big=(1, 0),
    store=(11, 9),
    bigs=(1, 0),
    debt=(0, 0),
    to_move=1,
    ply=17,
)

#: Late game: P0's row is empty and P0 had only 3 pebbles, so P0 borrows 2 from P1.
REFILL_DUE: Final = BoardView(
    board=(0, 0, 0, 0, 0, 0, 8, 4, 0, 9, 2, 0),
    big=(0, 1),
    store=(3, 24),
    bigs=(1, 0),
    debt=(0, 0),
    to_move=0,
    ply=30,
)

#: Crowded board, P0 to move (owing 2), two-digit counts in both quan squares and several cells.
CROWDED: Final = BoardView(
    board=(13, 11, 0, 12, 1, 0, 10, 0, 1, 0, 0, 2),
    big=(1, 1),
    store=(0, 0),
    bigs=(0, 0),
    debt=(2, 0),
    to_move=0,
    ply=41,
)

#: Not a reachable position: the widest count (70 = every pebble) in every square.
STRESS: Final = BoardView(board=(70,) * 12, big=(1, 1), store=(70, 70), debt=(70, 70))

#: Three seats, P2 to move (a random game at ply 14): one quan taken by P1, one by P2.
THREE: Final = BoardView(
    board=(4, 0, 3, 0, 2, 0, 13, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 2),
    big=(0, 1, 0),
    store=(8, 10, 28),
    bigs=(0, 1, 1),
    debt=(0, 0, 0),
    to_move=2,
    ply=14,
    lent=(0, 0, 0),
)

#: Three seats late (ply 63): P0's row was empty, P0 put 4 of its own and borrowed 1 of P2.
THREE_REFILLED: Final = BoardView(
    board=(2, 1, 1, 1, 1, 1, 3, 0, 1, 1, 1, 1, 7, 1, 0, 0, 1, 0),
    big=(0, 0, 0),
    store=(0, 24, 28),
    bigs=(0, 1, 2),
    debt=(1, 0, 0),
    to_move=0,
    ply=63,
    lent=(0, 0, 1),
)

#: Four seats, P2 to move (ply 18).
FOUR: Final = BoardView(
    board=(6, 0, 14, 1, 0, 0, 7, 0, 0, 3, 0, 2, 9, 5, 0, 3, 0, 0, 0, 0, 4, 0, 1, 0),
    big=(1, 1, 1, 0),
    store=(11, 13, 18, 3),
    bigs=(0, 1, 0, 0),
    debt=(0, 0, 0, 0),
    to_move=2,
    ply=18,
    lent=(0, 0, 0, 0),
)

#: Four seats late (ply 106): P2 refilled 4 of its own and 1 lent by P0; P3 owes 5 to P1.
FOUR_REFILLED: Final = BoardView(
    board=(0, 1, 0, 0, 1, 0, 7, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0),
    big=(0, 0, 0, 0),
    store=(40, 40, 0, 4),
    bigs=(1, 3, 0, 0),
    debt=(0, 0, 1, 5),
    to_move=2,
    ply=106,
    lent=(1, 5, 0, 0),
)

SAMPLES: Final[dict[str, Screen]] = {
    "board_start": BoardScreen(START),
    "board_midgame": BoardScreen(MIDGAME),
    "board_crowded": BoardScreen(CROWDED),
    "board_stress": BoardScreen(STRESS),
    # 3+ from the start: relay at 9, then 3 is empty and 4 is taken (6).
    "move_start": MoveScreen(
        START,
        MovePreview(3, 1, path=(4, 5, 6, 7, 8, 10, 11, 0, 1, 2), captures=(4,), gain=6),
    ),
    # 7+: relay at 10, stops before the occupied left quan.
    "move_nothing": MoveScreen(MIDGAME, MovePreview(7, 1, path=(8, 9, 11))),
    # 10-: one pebble to 9, 8 empty, takes 7; then two empty squares.
    "move_takes": MoveScreen(MIDGAME, MovePreview(10, -1, path=(9,), captures=(7,), gain=2)),
    # 9-: chain capture of the left quan (12 + big stone), then 10 and 8.
    "move_chain": MoveScreen(
        MIDGAME,
        MovePreview(
            9, -1, path=(8, 7, 6, 5, 4, 3, 2), captures=(0, 10, 8), gain=24, takes_quan=True
        ),
    ),
    # 1-: eleven pebbles round the ring, then takes the left quan (14 + big stone).
    "move_round": MoveScreen(
        CROWDED,
        MovePreview(
            1,
            -1,
            path=(0, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2),
            captures=(0,),
            gain=24,
            takes_quan=True,
        ),
    ),
    "scores": ScoresScreen(replace(MIDGAME, debt=(0, 2))),
    "refill_own": RefillScreen(replace(REFILL_DUE, store=(7, 20)), RefillView(0, 0)),
    "refill_borrow": RefillScreen(REFILL_DUE, RefillView(0, 2)),
    "refill_all_borrowed": RefillScreen(replace(REFILL_DUE, store=(0, 27)), RefillView(0, 5)),
    "dispute": DisputeScreen(MIDGAME, Dispute(square=3, expected=14, seen=13)),
    "dispute_quan": DisputeScreen(MIDGAME, Dispute(square=0, expected=12, seen=11)),
    "confirm_two": ConfirmScreen(
        (
            MovePreview(square=2, direction=1, captures=(5,), gain=6),
            MovePreview(square=4, direction=-1, captures=(), gain=0),
        ),
        selected=0,
    ),
    "confirm_same": ConfirmScreen(
        (
            MovePreview(square=3, direction=1, captures=(6,), gain=11, takes_quan=True),
            MovePreview(square=3, direction=-1, captures=(0,), gain=11, takes_quan=True),
        ),
        selected=0,
        same_board=True,
    ),
    "confirm_three": ConfirmScreen(
        (
            MovePreview(square=8, direction=1, captures=(0,), gain=22, takes_quan=True),
            MovePreview(square=9, direction=-1, captures=(), gain=0),
            MovePreview(square=11, direction=-1, captures=(3,), gain=14),
        ),
        selected=1,
    ),
    "menu_top": MenuScreen(MAIN_MENU, selected=0),
    "menu_language": MenuScreen(MAIN_MENU, selected=4),
    "menu_bottom": MenuScreen(
        (*MAIN_MENU[:5], MenuItem("menu.hints", "value.off"), *MAIN_MENU[6:]),
        selected=len(MAIN_MENU) - 1,
    ),
    "menu_opponent": MenuScreen(
        (*MAIN_MENU[:6], MenuItem("menu.opponent", "value.medium"), *MAIN_MENU[7:]), selected=6
    ),
    "menu_tally": MenuScreen(MAIN_MENU, selected=1),
    "new_game_confirm": NewGameScreen(selected=0, ply=17),
    # marking the board's corners: a photo of the board, then one with a pebble on each
    "calibrate_bare": CalibrateScreen(CalibrateStep.BARE),
    "calibrate_place": CalibrateScreen(CalibrateStep.PLACE, waiting=True),
    "calibrate_done": CalibrateScreen(CalibrateStep.DONE),
    "calibrate_unsaved": CalibrateScreen(CalibrateStep.DONE, saved=False),
    "calibrate_fewer": CalibrateScreen(CalibrateStep.FAILED, problem=MarksProblem.FEWER, seen=3),
    "calibrate_more": CalibrateScreen(CalibrateStep.FAILED, problem=MarksProblem.MORE, seen=12),
    "calibrate_no_board": CalibrateScreen(
        CalibrateStep.FAILED, problem=MarksProblem.NO_BOARD, seen=4
    ),
    "calibrate_forgotten": CalibrateScreen(CalibrateStep.FORGOTTEN),
    "calibrate_forgotten_unsaved": CalibrateScreen(CalibrateStep.FORGOTTEN, saved=False),
    "calibrate_nothing": CalibrateScreen(CalibrateStep.NOTHING),
    "tally_guide": TallyGuideScreen(player=0),
    "tally_counting": TallyGuideScreen(player=1, counting=True),
    # P0's heap spread: 41 small pieces and one quan; squares 2 and 9 may hide a pebble.
    "tally_count": TallyCountScreen(
        0, TallyView((0, 4, 6, 5, 4, 3, 0, 4, 3, 5, 4, 3), (1, 0), 41, 40, 43, unsure=(2, 9))
    ),
    # ... and after the players laid 2 and 9 out: 9 is still unsure, spreading is done
    "tally_spread": TallyCountScreen(
        0,
        TallyView(
            (0, 4, 5, 5, 4, 3, 0, 4, 3, 5, 4, 3), (1, 0), 40, 40, 41, unsure=(9,), spread=True
        ),
    ),
    # ... then ▶: the players count square 9 by hand, the one left lit (4 there, not 5)
    "tally_hand": TallyHandScreen(
        0,
        TallyView((0, 4, 5, 5, 4, 3, 0, 4, 3, 4, 4, 3), (1, 0), 39, 39, 39),
        square=9,
        index=0,
        of=1,
    ),
    "tally_exact": TallyCountScreen(
        1, TallyView((0, 2, 3, 1, 2, 3, 0, 2, 1, 2, 3, 1), (0, 1), 20, 20, 20)
    ),
    "tally_entry": TallyEntryScreen(player=1, pieces=37, bigs=1, field="units"),
    # V40's end: A 37 captured + 10 quan + 5 repaid = 52; B 13 + 10 - 5 = 18.
    "tally_final": TallyFinalScreen(
        FinalView((37, 13), (1, 1), 10, (0, 5), (52, 18), 0, sweep=(0, 0))
    ),
    "tally_final_detail": TallyFinalScreen(
        FinalView((41, 19), (1, 0), 10, (0, 5), (56, 14), 0, sweep=(4, 6)), page=1
    ),
    # V40's heaps with 3 of P0's pebbles missed: 47 where the game leaves 50.
    "tally_final_short": TallyFinalScreen(
        FinalView((34, 13), (1, 1), 10, (0, 5), (49, 18), 0, sweep=(0, 0), off_by=3)
    ),
    "tally_final_close": TallyFinalScreen(
        FinalView((30, 40), (1, 0), 10, (0, 0), (40, 40), None, sure=False)
    ),
    # 2+ from the start (V01): pick up 2, drop into 3..7, relay 8, ..., capture 3.
    "replay_pick": ReplayScreen(
        MovePreview(2, 1, captures=(3,), gain=6),
        ReplayStep("pick", replace(START, board=(0, 5, 0, 5, 5, 5, 0, 5, 5, 5, 5, 5)), 2, 5, 5),
        1,
        14,
    ),
    "replay_drop": ReplayScreen(
        MovePreview(2, 1, captures=(3,), gain=6),
        ReplayStep("drop", replace(START, board=(1, 6, 0, 6, 6, 6, 1, 6, 0, 6, 6, 6)), 1, 0, 0),
        12,
        14,
    ),
    "replay_capture": ReplayScreen(
        MovePreview(9, -1, captures=(0,), gain=22, takes_quan=True),
        ReplayStep(
            "capture", replace(MIDGAME, board=(0, *MIDGAME.board[1:]), big=(0, 0)), 0, 12, 0, big=1
        ),
        6,
        7,
    ),
    "rules_1": RulesScreen(1),
    "rules_2": RulesScreen(2),
    "rules_3": RulesScreen(3),
    "rules_4": RulesScreen(4),
    "error_camera": ErrorScreen(ErrorKind.CAMERA_LOST),
    "error_board": ErrorScreen(ErrorKind.BOARD_NOT_FOUND, mark=True),
    # (no camera that can take the corners from marks: a ring board's given corners)
    "error_board_plain": ErrorScreen(ErrorKind.BOARD_NOT_FOUND),
    "over_win": GameOverScreen(Result(final=(41, 29), winner=0, sweep=(4, 9))),
    "over_draw": GameOverScreen(Result(final=(35, 35), winner=None, sweep=(0, 6))),
    "over_no_refill": GameOverScreen(
        Result(final=(12, 51), winner=1, sweep=None, reason="no_refill")
    ),
    "idle": IdleScreen(seconds=10),
    "attract_0": AttractScreen(frame=0),
    "attract_5_shifted": AttractScreen(frame=5, offset=(2, 1)),
    "attract_9_shifted": AttractScreen(frame=9, offset=(-2, -1)),
    "attract_history": AttractScreen(frame=20, page=1),
    "attract_saying": AttractScreen(frame=30, offset=(1, 1), page=2),
    "hint_gain": HintScreen(
        MIDGAME, MovePreview(9, -1, path=(8, 7), captures=(6, 4), gain=14), "gain", 14
    ),
    "hint_prevent": HintScreen(MIDGAME, MovePreview(7, 1, path=(8,)), "prevent", 12),
    "ai_own_move": HintScreen(MIDGAME, MovePreview(10, 1, path=(11, 0)), own=True),
    "operator": OperatorScreen(OPERATOR_MENU, 1, games=1234, disputes=56),
    # a game that keeps cycling: the count if it ended now, each seat agrees in turn
    "cycle_spiral": CycleScreen("debt_spiral", (52, 18), asking=0),
    "cycle_agreed": CycleScreen("debt_spiral", (52, 18), agreed=(0,), asking=1),
    "cycle_four": CycleScreen("repetition", (30, 41, 41, 28), agreed=(2, 3), asking=0),
    # three and four seats: one row per seat, the heap's points at the right
    "board_three": BoardScreen(THREE),
    "board_three_debt": BoardScreen(THREE_REFILLED),
    "board_four": BoardScreen(FOUR),
    # 7-: one pebble into quan 6, then 5 empty takes 4, 3 empty takes 2, 1 empty takes quan 0.
    "move_three": MoveScreen(THREE, MovePreview(7, -1, path=(6,), captures=(4, 2, 0), gain=9)),
    # 13+: five pebbles to 18, then takes 20, 22, the quan 0 (6 + big stone) and 2.
    "move_four": MoveScreen(
        FOUR,
        MovePreview(
            13, 1, path=(14, 15, 16, 17, 18), captures=(20, 22, 0, 2), gain=35, takes_quan=True
        ),
    ),
    "refill_three": RefillScreen(THREE_REFILLED, RefillView(0, 1, ((2, 1),))),
    "refill_four": RefillScreen(FOUR_REFILLED, RefillView(2, 1, ((0, 1),))),
    "scores_three": ScoresScreen(THREE_REFILLED),
    "scores_four": ScoresScreen(FOUR_REFILLED),
    "over_three": GameOverScreen(Result(final=(41, 40, 24), winner=0, sweep=(0, 1, 1))),
    "over_four": GameOverScreen(Result(final=(30, 41, 41, 28), winner=None, sweep=(0, 2, 1, 0))),
}
