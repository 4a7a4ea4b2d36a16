"""Every word the OLED shows, in Vietnamese and English, with the box it must fit.

Text is laid out by hand (explicit line breaks, no wrapping at run time) so a
string either fits its box on the 128x64 panel or fails a test; a translator
sees the limit next to the text. Vietnamese runs about 30 % longer than
English, which is why boxes are sized on the Vietnamese side.

Format fields used by the strings, and the worst cases the fit test tries,
are listed in :data:`SAMPLES`. Strings are NFC-normalised when looked up,
because the bitmap font has precomposed glyphs only (no combining layout).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from companion.ui.screens.fonts import FontName

Lang = Literal["vi", "en"]
LANGS: Final[tuple[Lang, ...]] = ("vi", "en")

#: Seat names, the same in both languages and on every surface (terminal, JSON, journal):
#: P0 owns squares 1..5 (the bottom row of the two-player board) and moves first.
SIDES: Final = ("P0", "P1", "P2", "P3")


@dataclass(frozen=True, slots=True)
class Entry:
    """One catalogue string in both languages and the box (font, width, lines) it must fit."""

    vi: str
    en: str
    font: FontName = "text"
    width: int = 128
    lines: int = 1


_E = Entry

CATALOGUE: Final[dict[str, Entry]] = {
    # board / turn
    "turn": _E("Lượt {p}", "{p}'s turn", width=54),
    # points in each heap now (captured pebbles + quan); debts are shown beside, never netted
    "score_line": _E("Điểm: {p} {a} · {q} {b}", "Score: {p} {a} · {q} {b}"),
    # what a seat still has to repay at the count (net of what it is owed)
    "debt": _E("{p} nợ {o}", "{p} owes {o}", width=66),
    "debts": _E("Nợ: {who}", "Owe: {who}"),
    # squares, as used inside a sentence: by their number, as the terminal and journal say
    "square": _E("ô {sq}", "square {sq}"),
    "quan": _E("ô quan {sq}", "quan {sq}"),
    # move cursor and preview
    "move.take": _E("{mv} {arrow} ăn {n}", "{mv} {arrow} takes {n}", width=126),
    "move.take_quan": _E(
        "{mv} {arrow} ăn {n} (có quan)", "{mv} {arrow} takes {n} (quan)", width=126
    ),
    "move.nothing": _E("{mv} {arrow} không ăn", "{mv} {arrow} no capture", width=126),
    "move.keys": _E("◀ ▶ đổi nước  OK chọn", "◀ ▶ change  OK choose"),
    # scores table
    "scores.title": _E("Điểm", "Score", width=60),
    "scores.store": _E("Dân ăn", "Pebbles", width=60),
    "scores.bigs": _E("Quan", "Quan", width=60),
    "scores.side": _E("{p}", "{p}", width=30),
    # scores of three or four seats (one column each)
    "scores.held": _E("Điểm có", "Heap", width=48),
    "scores.borrowed": _E("Vay", "Owes", width=48),
    "scores.lent": _E("Cho vay", "Lent", width=48),
    "scores.settled": _E("Tạm tính", "So far", width=48),
    "scores.place": _E("Hạng", "Place", width=48),
    "scores.debt": _E("Nợ", "Owes", width=60),
    "scores.total": _E("Tạm tính", "So far", width=60),
    # refill (R11)
    "refill.put": _E("Bên {p}: 1 viên mỗi ô", "{p}: put 1 on each"),
    "refill.own": _E("lấy {n} viên đã ăn", "{n} from own store"),
    "refill.borrow": _E("vay bên {q} {n} viên", "borrow {n} from {q}"),
    "refill.own_borrow": _E("của mình {m}, vay {q} {n}", "own {m}, borrow {n} ({q})"),
    # three or four seats: the lenders' columns show what each gives
    "refill.ring": _E("của mình {m}, vay {n}", "own {m}, borrowed {n}"),
    # disputed square
    "dispute.check": _E("Kiểm tra {where}", "Check {where}"),
    "dispute.counts": _E("Cần {e}, thấy {s}", "Expected {e}, seen {s}"),
    # ambiguous move
    "confirm.title": _E("Nước nào?", "Which move?"),
    # the moves offered leave the same board: no photo can tell them apart
    "confirm.same": _E("Như nhau: nước nào?", "Same board: which?"),
    "confirm.keys": _E("◀ ▶ chọn   OK đúng", "◀ ▶ pick   OK yes"),
    # menus
    "menu.title": _E("Tùy chọn", "Menu", width=128),
    "menu.keys": _E("◀ ▶ di chuyển OK chọn", "◀ ▶ move   OK select"),
    "menu.new_game": _E("Ván mới", "New game", width=118),
    "menu.tally": _E("Đếm quân", "Count pieces", width=118),
    "menu.replay": _E("Xem lại nước", "Replay move", width=118),
    "menu.rules": _E("Luật chơi", "Rules", width=118),
    "menu.language": _E("Ngôn ngữ", "Language", width=50),
    "menu.hints": _E("Gợi ý", "Hints", width=76),
    "menu.calibrate": _E("Đánh dấu góc bàn", "Mark board corners", width=118),
    "menu.shutdown": _E("Tắt máy", "Shut down", width=118),
    "menu.back": _E("Quay lại", "Back", width=118),
    "menu.opponent": _E("Đấu máy", "Opponent", width=76),
    "value.on": _E("bật", "on", width=36),
    "value.easy": _E("dễ", "easy", width=36),
    "value.medium": _E("vừa", "medium", width=36),
    "value.hard": _E("khó", "hard", width=36),
    "value.off": _E("tắt", "off", width=36),
    "value.vi": _E("Tiếng Việt", "Tiếng Việt", width=62),
    "value.en": _E("English", "English", width=62),
    # rules pages (menu -> rules)
    "rules.page": _E("{page}/{pages}", "{page}/{pages}", width=40),
    "rules.1": _E(
        "Đến lượt: chọn 1 ô\ncủa mình, bốc hết sỏi\nrải lần lượt mỗi ô 1\nviên, trái hay phải.",
        "Pick one of your\nsquares, take all its\npebbles and drop one\nper square, any way.",
        lines=4,
    ),
    "rules.2": _E(
        "Ô kế tiếp có sỏi:\nbốc lên, rải tiếp.\nKế tiếp là ô quan,\nhay 2 ô trống: dừng.",
        "Next square full:\ntake them, sow on.\nStop at a quan, or\nat two empty squares.",
        lines=4,
    ),
    "rules.3": _E(
        "Một ô trống rồi ô có\nsỏi: ăn hết ô đó, xét\ntiếp (ăn liên hoàn).\nQuan non (<5): dừng.",
        "One empty, then full:\ncapture it, and again\nwhile the gaps go on.\nQuan with <5: stop.",
        lines=4,
    ),
    "rules.4": _E(
        "Hết dân: lấy 5 viên\nđã ăn rải lại, thiếu\nthì vay. Hết quan:\nthu dân, quan = 10.",
        "Row empty: put back 5\npebbles, borrow if\nshort. Ends when both\nquan squares empty.",
        lines=4,
    ),
    # errors
    "error.camera_lost.title": _E("Mất camera", "Camera lost", width=100),
    "error.camera_lost.body": _E("Vui lòng báo\nnhân viên.", "Please tell\nthe staff.", lines=2),
    "error.board_not_found.title": _E("Không thấy bàn", "Board not found", width=100),
    "error.board_not_found.body": _E(
        "Bỏ tay ra khỏi bàn,\nrồi bấm OK.", "Keep hands off the\nboard, then press OK.", lines=2
    ),
    # under an error where the camera can take the board's corners from marks
    "error.mark": _E("▶ đánh dấu góc bàn", "▶ mark its corners"),
    # game over
    "over.win": _E("{p} thắng!", "{p} wins!", font="head"),
    "over.place": _E("{i}. {p} {n}", "{i}. {p} {n}", width=60),
    "over.draw": _E("Hòa!", "Draw!", font="head"),
    "over.reason.mandarins_taken": _E("Hết quan, tàn dân", "Both quan taken"),
    "over.reason.no_refill": _E("Không đủ dân rải lại", "No pebbles to refill"),
    "over.reason.repetition": _E("Lặp lại thế cờ", "Position repeated"),
    "over.reason.ply_limit": _E("Quá số nước", "Move limit reached"),
    "over.reason.agreed": _E("Dừng và đếm điểm", "Stopped, counted"),
    "over.reason.other": _E("Hết ván", "Game over"),
    "over.sweep": _E("Thu dân: {p} {a}, {q} {b}", "Sweep: {p} {a}, {q} {b}"),
    # a game that keeps cycling: end it by the count if every seat agrees
    "cycle.title": _E("Đếm điểm luôn?", "End by the count?"),
    "cycle.repetition": _E("Ván cứ lặp lại", "The game repeats"),
    "cycle.debt_spiral": _E("Nợ cứ tăng mãi", "Debts keep growing"),
    "cycle.final": _E("{p} {n}", "{p} {n}", width=42),
    "cycle.back": _E("BACK: chơi tiếp", "BACK: play on"),
    "cycle.ask": _E("{p}: OK là đồng ý", "{p}: OK to agree"),
    # hints and the companion's own moves
    "hint.gain": _E("Lợi {n} điểm", "Gains {n} points"),
    "hint.prevent": _E("Chặn bên {q} ăn {n}", "Stops {q} taking {n}"),
    "hint.quiet": _E("Nước an toàn", "A safe move"),
    "ai.own": _E("Máy đi, bạn rải giúp", "My move: sow it"),
    # operator (kiosk)
    "operator.title": _E("Ván {g} · Cãi {d}", "Games {g} Disp {d}", width=128),
    "operator.rules": _E("Luật (biến thể)", "Rules variant", width=118),
    "operator.calibrate": _E("Đánh dấu góc bàn", "Mark board corners", width=118),
    "operator.forget_corners": _E("Bỏ góc đã đánh dấu", "Forget corners", width=118),
    "operator.reset_counters": _E("Xóa bộ đếm", "Reset counters", width=118),
    "operator.reboot": _E("Khởi động lại", "Restart", width=118),
    "operator.shutdown": _E("Tắt máy", "Shut down", width=118),
    # attract pages: what the game is, and the saying at the end of a game
    "attract.history": _E(
        "Ô ăn quan: trò chơi\ndân gian Việt Nam, kẻ\nphấn trên sân, chơi\nbằng sỏi, hai người.",
        "Ô ăn quan: a folk\ngame from Vietnam,\ndrawn in chalk and\nplayed with pebbles.",
        lines=4,
    ),
    "attract.saying": _E(
        "Hết quan, tàn dân,\nthu quân, kéo về.\n(câu nói khi hết ván)",
        "No quan, few pebbles:\ngather them, go home.\n(said at the end)",
        lines=3,
    ),
    # a new game while one is in progress
    "newgame.title": _E("Chơi ván mới?", "Start a new game?"),
    "newgame.keep": _E("Không, chơi tiếp", "No, keep playing", width=124),
    "newgame.wipe": _E("Có, ván mới", "Yes, new game", width=124),
    "newgame.ply": _E("Đã đi {n} nước", "{n} moves played"),
    # marking the board's corners with a pebble on each (no search finds the board)
    "calibrate.title": _E("Đánh dấu góc bàn", "Mark board corners"),
    "calibrate.title_bare": _E("Góc bàn 1/2: chụp bàn", "Corners 1/2: board"),
    "calibrate.title_place": _E("Góc bàn 2/2: 4 viên", "Corners 2/2: pebbles"),
    "calibrate.bare": _E(
        "Bỏ tay ra khỏi bàn,\nkhông để gì ở 4 góc\nngoài, rồi bấm OK.",
        "Hands off the board,\nnothing on its 4\nouter corners. OK.",
        lines=3,
    ),
    "calibrate.place": _E(
        "Đặt 1 viên lên mỗi\ngóc ngoài của bàn,\nđứng ra, rồi bấm OK.",
        "A pebble on each of\nthe 4 outer corners,\nstand back, then OK.",
        lines=3,
    ),
    "calibrate.keys": _E("OK chụp   BACK thôi", "OK photo  BACK stop"),
    "calibrate.waiting": _E("Đứng ra, sắp chụp...", "Stand back: photo..."),
    "calibrate.done": _E(
        "Đã nhận 4 góc bàn.\nLấy 4 viên ra,\nrồi bấm OK.",
        "Corners set and kept.\nTake the 4 pebbles\naway, then OK.",
        lines=3,
    ),
    "calibrate.done_unsaved": _E(
        "Đã nhận 4 góc (chưa\nlưu: mất khi tắt).\nLấy 4 viên ra, OK.",
        "Corners set, not kept\nafter a restart. Take\nthe pebbles away, OK.",
        lines=3,
    ),
    "calibrate.fewer": _E(
        "Thấy {n} viên, cần 4:\nmỗi góc ngoài 1 viên,\nrồi bấm OK.",
        "Saw {n} marks, need 4:\none on each outer\ncorner, then OK.",
        lines=3,
    ),
    "calibrate.more": _E(
        "Thấy {n} chỗ đổi, hơn\n4 viên: lấy viên ra,\nOK để làm lại.",
        "Saw {n} changes, not\njust 4 pebbles: take\nthem off, OK: again.",
        lines=3,
    ),
    "calibrate.no_board": _E(
        "4 viên không thành\nbàn: mỗi góc ngoài\n1 viên, rồi bấm OK.",
        "The 4 pebbles make\nno board: one on each\nouter corner, OK.",
        lines=3,
    ),
    "calibrate.forgotten": _E(
        "Đã bỏ 4 góc đánh\ndấu: máy tìm bàn\nnhư trước.",
        "Marked corners\nforgotten: the board\nis found as before.",
        lines=3,
    ),
    "calibrate.forgotten_unsaved": _E(
        "Đã bỏ 4 góc, nhưng\nchưa xóa được: sẽ\ndùng lại khi bật.",
        "Corners forgotten,\nbut not on disk: back\nafter a restart.",
        lines=3,
    ),
    "calibrate.nothing": _E(
        "Chưa đánh dấu góc\nnào: không có gì\nđể bỏ.",
        "No corners were\nmarked: nothing to\nforget.",
        lines=3,
    ),
    "calibrate.again_keys": _E("OK chụp lại BACK thôi", "OK again  BACK stop"),
    "calibrate.ok_keys": _E("OK xong", "OK done"),
    # tally mode: count each side's pieces to settle the score
    "tally.title": _E("Đếm quân bên {p}", "Counting for {p}"),
    "tally.guide": _E(
        "Quân bên {p} (cả hàng)\nrải 1 lớp lên 10 ô,\nquan để ở hai đầu.",
        "{p}'s heap and row in\none layer on the 10\nsquares, quan at ends",
        lines=3,
    ),
    "tally.keys": _E("OK đếm   BACK thôi", "OK count  BACK stop"),
    "tally.counting": _E("Đang đếm...", "Counting..."),
    "tally.result": _E("{p}: {t}, chắc {lo}-{hi}", "{p}: {t}, surely {lo}-{hi}"),
    "tally.exact": _E("{p}: {t}, chắc chắn", "{p}: {t} for sure"),
    "tally.unsure": _E("◀ rải lại  ▶ đếm tay", "◀ respread  ▶ by hand"),
    "tally.sure_keys": _E("OK đúng   ◀ đếm lại", "OK right  ◀ recount"),
    # the lit squares were laid out already: spreading more will not help
    "tally.spread_keys": _E("OK giữ   ▶ đếm tay", "OK keep  ▶ by hand"),
    # a lit square counted by hand: the i-th of n
    "hand.title": _E("Đếm tay ô sáng {i}/{n}", "Count by hand {i}/{n}"),
    "entry.title": _E("Nhập quân bên {p}", "Pieces of {p}"),
    "entry.pieces": _E("Dân", "Pieces", width=50),
    "entry.points": _E("= {n} điểm", "= {n} pts", width=64),
    "entry.keys": _E("◀ ▶ đổi số  OK tiếp", "◀ ▶ change  OK next"),
    "final.win": _E("{p} thắng", "{p} wins", width=60),
    "final.draw": _E("Hòa", "Draw", width=60),
    "final.close": _E("Sát nút!", "Too close", width=60),
    "final.short": _E("Thiếu {n}?", "Short {n}?", width=60),
    "final.extra": _E("Thừa {n}?", "{n} extra?", width=60),
    "final.pieces": _E("Dân", "Pieces", width=60),
    "final.debt": _E("Nợ trả", "Debts", width=60),
    "final.total": _E("Tổng", "Total", width=60),
    "final.detail": _E("Chi tiết", "Details", width=60),
    "final.sweep": _E("Thu dân", "Swept", width=60),
    "final.captured": _E("Dân ăn", "Captured", width=60),
    "final.owed": _E("Vay", "Borrowed", width=60),
    "final.repaid": _E("Được trả", "Repaid", width=60),
    # replay of the last move, pebble by pebble
    "replay.start": _E("Nước {mv} {arrow}", "Move {mv} {arrow}", width=90),
    "replay.pick": _E("Bốc ô {sq}: {c}", "Pick up {sq}: {c}"),
    "replay.relay": _E("Bốc tiếp ô {sq}: {c}", "Relay from {sq}: {c}"),
    "replay.drop": _E("Rải 1 vào ô {sq}", "Drop 1 in {sq}"),
    "replay.capture": _E("Ăn ô {sq}: {c}", "Capture {sq}: {c}"),
    "replay.refill": _E("{p} rải lại 5", "{p} refills 5"),
    "replay.end": _E("Hết lượt", "Turn over"),
    "replay.step": _E("{i}/{k} ◀ ▶", "{i}/{k} ◀ ▶", width=60),
    "replay.hand": _E("Trên tay {h}", "In hand {h}", width=66),
    "replay.quan": _E("Ăn cả quan!", "With quan!", width=66),
    # attract / idle
    "attract.title": _E("Ô ĂN QUAN", "Ô ĂN QUAN", width=60),
    "attract.vi": _E("Nhấn nút để chơi", "Nhấn nút để chơi", width=120),
    "attract.en": _E("Press to play", "Press to play", width=120),
    "idle.title": _E("Còn chơi chứ?", "Still playing?", font="head"),
    "idle.keys": _E("Bấm nút bất kỳ", "Press any button"),
}

#: Worst-case values of every format field, tried in all combinations by the fit test.
SAMPLES: Final[dict[str, tuple[str, ...]]] = {
    "p": SIDES,
    "q": SIDES,
    "a": ("70", "-9"),
    "b": ("70", "-9"),
    "n": ("70",),
    "m": ("4",),
    "e": ("70",),
    "s": ("70",),
    "sq": ("5", "11", "23"),
    "mv": ("5+", "11-", "23-"),
    "o": ("5", "999"),
    "who": ("P0 999 · P2 999",),
    "arrow": ("→", "←"),
    "page": ("4",),
    "pages": ("4",),
    "g": ("9999",),
    "t": ("70",),
    "lo": ("70",),
    "hi": ("70",),
    "i": ("99",),
    "k": ("99",),
    "c": ("70",),
    "h": ("70",),
    "d": ("999",),
}


def text(key: str, lang: Lang, **fields: object) -> str:
    """The NFC string for ``key`` in ``lang`` with ``fields`` filled in.

    >>> text("turn", "en", p="P0")
    "P0's turn"
    """
    if lang not in LANGS:
        raise ValueError(f"language must be one of {LANGS}, got {lang!r}")
    entry = CATALOGUE[key]
    raw = entry.vi if lang == "vi" else entry.en
    return unicodedata.normalize("NFC", raw.format(**fields) if fields else raw)


def side(player: int) -> str:
    """Seat name: 0 -> "P0" (moves first; the bottom row of the two-player board)."""
    return SIDES[player]


def is_quan(square: int) -> bool:
    return square % 6 == 0


def square_name(square: int, lang: Lang) -> str:
    """A square as said in a sentence, by its number: "ô 3" / "square 3", "ô quan 6" / "quan 6"."""
    return text("quan" if is_quan(square) else "square", lang, sq=square)


def move_code(square: int, direction: int) -> str:
    """The move as the terminal and the journal write it: "3+", "9-"."""
    return f"{square}{'+' if direction > 0 else '-'}"


def arrow(square: int, direction: int, players: int = 2) -> str:
    """The sowing direction as seen on the screen.

    Two seats (P0's row at the bottom): direction +1 runs left to right along
    the bottom row but right to left along the top row, so the same ``+``
    draws as opposite arrows. Three or four seats are drawn one row per seat,
    each from its owner's left to right, so ``+`` is always "→".
    """
    if players != 2:
        return "→" if direction > 0 else "←"
    top_row = square > 6
    return "→" if (direction > 0) != top_row else "←"


def sample_fields(lang: Lang) -> dict[str, tuple[str, ...]]:
    """:data:`SAMPLES` plus the language-dependent ones (square names)."""
    return {**SAMPLES, "where": tuple(square_name(sq, lang) for sq in (0, 6, 11, 18, 23))}
