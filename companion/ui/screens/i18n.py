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

#: Player letters, the same in both languages: A sits at the bottom row (squares 1..5).
SIDES: Final = ("A", "B")


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
    "turn": _E("Lượt bên {p}", "Player {p} to move"),
    "score_line": _E("Điểm: A {a} · B {b}", "Score: A {a} · B {b}"),
    # squares, as used inside a sentence
    "square": _E("ô {sq}", "square {sq}"),
    "quan_left": _E("ô quan trái", "left quan"),
    "quan_right": _E("ô quan phải", "right quan"),
    # move cursor and preview
    "move.take": _E("{sq} {arrow} ăn {n}", "{sq} {arrow} takes {n}", width=124),
    "move.take_quan": _E(
        "{sq} {arrow} ăn {n} (có quan)", "{sq} {arrow} takes {n} (quan)", width=124
    ),
    "move.nothing": _E("{sq} {arrow} không ăn", "{sq} {arrow} no capture", width=124),
    "move.keys": _E("◀ ▶ đổi nước  OK chọn", "◀ ▶ change  OK choose"),
    # scores table
    "scores.title": _E("Điểm", "Score", width=60),
    "scores.store": _E("Dân ăn", "Pebbles", width=60),
    "scores.bigs": _E("Quan", "Quan", width=60),
    "scores.side": _E("{p}", "{p}", width=30),
    "scores.debt": _E("Nợ", "Owes", width=60),
    "scores.total": _E("Tạm tính", "So far", width=60),
    # refill (R11)
    "refill.put": _E("Bên {p}: 1 viên mỗi ô", "{p}: put 1 on each"),
    "refill.own": _E("lấy {n} viên đã ăn", "{n} from own store"),
    "refill.borrow": _E("vay bên {q} {n} viên", "borrow {n} from {q}"),
    "refill.own_borrow": _E("của mình {m}, vay {q} {n}", "own {m}, borrow {n} ({q})"),
    # disputed square
    "dispute.check": _E("Kiểm tra {where}", "Check {where}"),
    "dispute.counts": _E("Cần {e}, thấy {s}", "Expected {e}, seen {s}"),
    # ambiguous move
    "confirm.title": _E("Nước nào?", "Which move?"),
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
    "menu.calibrate": _E("Chỉnh camera", "Calibrate camera", width=118),
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
    # game over
    "over.win": _E("Bên {p} thắng!", "Player {p} wins!", font="head"),
    "over.draw": _E("Hòa!", "Draw!", font="head"),
    "over.reason.mandarins_taken": _E("Hết quan, tàn dân", "Both quan taken"),
    "over.reason.no_refill": _E("Không đủ dân rải lại", "No pebbles to refill"),
    "over.reason.repetition": _E("Lặp lại thế cờ", "Position repeated"),
    "over.reason.ply_limit": _E("Quá số nước", "Move limit reached"),
    "over.reason.other": _E("Hết ván", "Game over"),
    "over.sweep": _E("Thu dân: A {a}, B {b}", "Sweep: A {a}, B {b}"),
    # hints and the companion's own moves
    "hint.gain": _E("Lợi {n} điểm", "Gains {n} points"),
    "hint.prevent": _E("Chặn bên {q} ăn {n}", "Stops {q} taking {n}"),
    "hint.quiet": _E("Nước an toàn", "A safe move"),
    "ai.own": _E("Máy đi, bạn rải giúp", "My move: sow it"),
    # operator (kiosk)
    "operator.title": _E("Ván {g} · Cãi {d}", "Games {g} Disp {d}", width=128),
    "operator.rules": _E("Luật (biến thể)", "Rules variant", width=118),
    "operator.calibrate": _E("Chỉnh camera", "Calibrate camera", width=118),
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
    "tally.unsure": _E("Rải ô sáng ra, ◀ lại", "Spread lit, ◀ again"),
    "tally.sure_keys": _E("OK đúng   ◀ đếm lại", "OK right  ◀ recount"),
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
    "quan_left_code": _E("QT", "QL", width=12),
    "quan_right_code": _E("QP", "QR", width=12),
    "replay.start": _E("{i}/{k} Nước {sq} {arrow}", "{i}/{k} Move {sq} {arrow}"),
    "replay.pick": _E("{i}/{k} Bốc {sq}: {c}", "{i}/{k} Pick up {sq}: {c}"),
    "replay.relay": _E("{i}/{k} Bốc tiếp {sq}: {c}", "{i}/{k} Relay {sq}: {c}"),
    "replay.drop": _E("{i}/{k} Rải 1 vào {sq}", "{i}/{k} Drop 1 in {sq}"),
    "replay.capture": _E("{i}/{k} Ăn {sq}: {c}", "{i}/{k} Capture {sq}: {c}"),
    "replay.refill": _E("{i}/{k} {p} rải lại 5", "{i}/{k} {p} refills 5"),
    "replay.end": _E("{i}/{k} Hết lượt", "{i}/{k} Turn over"),
    "replay.hand": _E("Trên tay {h}    ◀ ▶", "In hand {h}     ◀ ▶"),
    "replay.quan": _E("Ăn cả quan!    ◀ ▶", "With the quan!  ◀ ▶"),
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
    "a": ("70", "-35", "+35"),
    "b": ("70", "-35", "+35"),
    "n": ("70",),
    "m": ("4",),
    "e": ("70",),
    "s": ("70",),
    "sq": ("A5", "B5"),
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

    >>> text("turn", "en", p="A")
    'Player A to move'
    """
    if lang not in LANGS:
        raise ValueError(f"language must be one of {LANGS}, got {lang!r}")
    entry = CATALOGUE[key]
    raw = entry.vi if lang == "vi" else entry.en
    return unicodedata.normalize("NFC", raw.format(**fields) if fields else raw)


def side(player: int) -> str:
    """Player letter: 0 -> "A" (bottom row), 1 -> "B" (top row)."""
    return SIDES[player]


def square_code(square: int) -> str:
    """Short label of a citizen square from its owner's seat: 3 -> "A3", 7 -> "B1"."""
    if square % 6 == 0:
        raise ValueError(f"mandarin square {square!r} has no short label")
    return f"{SIDES[square // 6]}{square % 6}"


def square_name(square: int, lang: Lang) -> str:
    """A square as said in a sentence: "ô A3", "ô quan trái" / "square A3", "left quan"."""
    if square == 0:
        return text("quan_left", lang)
    if square == 6:
        return text("quan_right", lang)
    return text("square", lang, sq=square_code(square))


def short_square(square: int, lang: Lang) -> str:
    """Two-letter label of any square: "A3", "B1", and "QT"/"QP" ("QL"/"QR") for the quan."""
    if square == 0:
        return text("quan_left_code", lang)
    if square == 6:
        return text("quan_right_code", lang)
    return square_code(square)


def arrow(square: int, direction: int) -> str:
    """The sowing direction as seen on the screen (player A at the bottom).

    Direction +1 runs left to right along the bottom row but right to left
    along the top row, so the same ``+`` draws as opposite arrows.
    """
    top_row = square > 6
    return "→" if (direction > 0) != top_row else "←"


def sample_fields(lang: Lang) -> dict[str, tuple[str, ...]]:
    """:data:`SAMPLES` plus the language-dependent ones (square names)."""
    return {**SAMPLES, "where": tuple(square_name(sq, lang) for sq in range(12))}
