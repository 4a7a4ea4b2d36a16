#!/usr/bin/env bash
# Does the slowest turn of the main loop fit well inside the unit's WatchdogSec?
#
# The loop pings the watchdog once per turn, and one turn can hold a full
# vision pass on a camera still plus the companion's move search. If that ever
# takes longer than WatchdogSec, systemd kills a perfectly healthy referee
# mid-game. Run this on the Pi after installing (hardware.md, "The service"):
#
#   sudo systemd/watchdog-budget.sh                 # grabs a real frame first
#   systemd/watchdog-budget.sh --frame view.png     # time an image you have
#
# Options:
#   --frame IMAGE   time vision on this image instead of grabbing one with
#                   `oanquan selftest --save-frame` (which stops the service
#                   for a moment and starts it again)
#   --runs N        vision passes and searches to time (default 5)
#   --level NAME    search level the companion plays (default hard)
#   --watchdog S    the budget in seconds (default: WatchdogSec of oanquan.service)
#   --python PATH   interpreter with the app installed (default /opt/oanquan/venv/bin/python)
#
# Prints the slowest vision pass, the slowest search and their sum; exits 0 when
# the sum is at most half of WatchdogSec, 1 when it is not, 2 on bad arguments.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=/opt/oanquan/venv/bin/python
frame=""
runs=5
level=hard
watchdog=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { printf 'watchdog-budget: %s\n' "$*" >&2; exit 2; }

while (($#)); do
    case "$1" in
        --frame) frame="${2:?--frame needs an image}"; shift ;;
        --runs) runs="${2:?--runs needs a number}"; shift ;;
        --level) level="${2:?--level needs a name}"; shift ;;
        --watchdog) watchdog="${2:?--watchdog needs seconds}"; shift ;;
        --python) python="${2:?--python needs a path}"; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs: expected a positive whole number, got '$runs'"
[[ -x $python ]] || die "no interpreter at $python (install first, or give --python)"

if [[ -z $watchdog ]]; then
    watchdog="$(sed -n 's/^WatchdogSec=\([0-9]*\)s\{0,1\}$/\1/p' "$here/oanquan.service")"
fi
[[ $watchdog =~ ^[0-9]+$ ]] || die "--watchdog: expected whole seconds, got '$watchdog'"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
if [[ -z $frame ]]; then
    frame="$scratch/view.png"
    # The service holds the camera: stop it for the grab, start it again after.
    was_active=0
    systemctl is-active --quiet oanquan.service && was_active=1
    ((was_active)) && systemctl stop oanquan.service
    oanquan selftest --skip board --save-frame "$frame" || true
    ((was_active)) && systemctl start oanquan.service
    [[ -s $frame ]] || die "no frame saved by oanquan selftest; fix the camera first"
fi
[[ -r $frame ]] || die "cannot read --frame $frame"

"$python" - "$frame" "$runs" "$level" "$watchdog" <<'EOF'
import sys
import time

import cv2

from engine import Position, Rules
from engine.search import level_move
from vision import VisionConfig, read_board

frame, runs, level, watchdog = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
image = cv2.imread(frame, cv2.IMREAD_COLOR)
if image is None:
    sys.exit(f"watchdog-budget: cannot decode {frame}")
config = VisionConfig()
vision_s = []
for _ in range(runs):
    t0 = time.perf_counter()
    read_board(image, config, gate=False)
    vision_s.append(time.perf_counter() - t0)
search_s = []
position, rules = Position.initial(), Rules()
for _ in range(runs):
    t0 = time.perf_counter()
    level_move(position, rules, level)
    search_s.append(time.perf_counter() - t0)
worst = max(vision_s) + max(search_s)
print(f"frame {image.shape[1]}x{image.shape[0]}: slowest vision pass {max(vision_s):.2f} s")
print(f"level {level}: slowest search {max(search_s):.2f} s")
verdict = "OK" if worst <= watchdog / 2 else "TOO SLOW"
print(f"one loop turn at worst {worst:.2f} s; WatchdogSec={watchdog:g}: {verdict} (limit: half)")
sys.exit(0 if verdict == "OK" else 1)
EOF
