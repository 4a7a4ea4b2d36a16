#!/usr/bin/env bash
# Install the O an quan referee on Raspberry Pi OS (Bookworm or Trixie, 64-bit).
#
# Run from a checkout on the Pi:   sudo systemd/install.sh
# See every step, change nothing:  systemd/install.sh --dry-run   (any Linux)
#
# Idempotent: running it again upgrades the app from the checkout, keeps
# /etc/oanquan/config.toml if it exists, and skips what is already done.
#
# Options:
#   --dry-run      print every step (commands and file contents) and change nothing
#   --data-partition PART
#                  keep /var/lib/oanquan (calibration, counters, game journal) on
#                  its own ext4 partition, e.g. /dev/mmcblk0p3: created in the
#                  free space after the last partition if missing, formatted if
#                  empty (never if it holds another filesystem), mounted with
#                  noatime from /etc/fstab. hardware.md, "Data partition".
#   --overlay      also make the root filesystem read-only (overlayfs, boot
#                  partition read-only too) and keep the system journal in RAM;
#                  see hardware.md, "Power cuts". Run it last, after
#                  `oanquan calibrate`, then reboot.
#   --overlay-off  turn the read-only root off again (the way raspi-config
#                  understands), then reboot, change things, run --overlay again
#   --no-start     install and enable the unit but do not (re)start it now
#   --no-compile   keep the pure-Python engine even where a C compiler is found
#   -h, --help     this text
#
# Environment (mostly for tests): OANQUAN_ROOT prefixes every path this script
# writes or inspects for state, like DESTDIR. Empty on a real install.
#
# Why a venv with --system-site-packages: picamera2 and its libcamera bindings
# come only from apt (they are tied to the installed libcamera build and are not
# on PyPI), so the venv must see /usr/lib/python3/dist-packages. The catch is
# numpy: apt's picamera2/simplejpeg are compiled against the system numpy, and
# a newer numpy from PyPI shadowing it breaks `import picamera2` ("numpy.dtype
# size changed"). So pip runs with a constraints file pinning numpy to the
# system version, and OpenCV is pinned to a headless release built for that
# numpy: 4.11.0.86 on Bookworm (numpy 1.24; OpenCV >= 4.12 needs numpy 2),
# a 4.x >= 4.12 on Trixie (numpy 2.x). Never --break-system-packages.
set -euo pipefail

readonly PREFIX=/opt/oanquan
readonly VENV=$PREFIX/venv
readonly CONFIG_DIR=/etc/oanquan
readonly UNIT_PATH=/etc/systemd/system/oanquan.service
readonly DOC_DIR=/usr/share/doc/oanquan
readonly JOURNALD_DROPIN=/etc/systemd/journald.conf.d/oanquan-volatile.conf
readonly WATCHDOG_DROPIN=/etc/systemd/system.conf.d/oanquan-watchdog.conf
readonly STATE_DIR=/var/lib/oanquan
readonly DATA_LABEL=oanquan-data
# The SoC watchdog (bcm2835-wdt) cannot time out later than 15 s.
readonly RUNTIME_WATCHDOG=15s
readonly SERVICE_USER=oanquan
readonly HW_GROUPS=(gpio i2c video)
readonly APT_PACKAGES=(
    python3-venv          # venv + ensurepip for the system interpreter
    python3-pip
    python3-numpy         # the numpy picamera2 was built against; pinned in the venv
    python3-picamera2     # CSI cameras (libcamera); apt only
    python3-libcamera
    python3-lgpio         # gpiozero's pin factory on every Pi incl. the Pi 5
    i2c-tools             # i2cdetect, for troubleshooting the OLED
    v4l-utils             # v4l2-ctl, for USB cameras
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/.." && pwd)"
root="${OANQUAN_ROOT:-}"
dry_run=0
overlay=0
overlay_off=0
data_partition=""
start=1
compile=1
# the scratch copy of the checkout the app is installed from (install_app sets it)
stage=
reboot_needed=0
step_no=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

say() { printf '%s\n' "$*"; }
warn() { printf 'install: warning: %s\n' "$*" >&2; }
die() { printf 'install: error: %s\n' "$*" >&2; exit 1; }
step() { step_no=$((step_no + 1)); printf '\n==> [%d] %s\n' "$step_no" "$*"; }

# Run a command, or only print it under --dry-run. Every change goes through
# run or one of the helpers below, so --dry-run cannot forget one.
run() {
    local shown
    shown="$(printf '%q ' "$@")"
    say "+ ${shown% }"
    ((dry_run)) || "$@"
}

# Write stdin to a file (mode, owner:group), showing the content under --dry-run.
write_file() {
    local dest="$root$1" mode="$2" owner="$3" content
    content="$(cat)"
    say "+ write $dest (mode $mode, owner $owner):"
    printf '%s\n' "$content" | sed 's/^/|   /'
    ((dry_run)) && return 0
    mkdir -p "$(dirname "$dest")"
    printf '%s\n' "$content" >"$dest.tmp.$$"
    chmod "$mode" "$dest.tmp.$$"
    chown "$owner" "$dest.tmp.$$"
    mv -f "$dest.tmp.$$" "$dest"
}

# Append a line to a file unless an identical line is already there.
ensure_line() {
    local file="$root$1" line="$2"
    if [[ -f $file ]] && grep -qxF -- "$line" "$file"; then
        say "= $file already has: $line"
        return 0
    fi
    say "+ append to $file: $line"
    ((dry_run)) && return 0
    printf '%s\n' "$line" >>"$file"
    reboot_needed=1
}

# Is LINE in effect for every Pi model: before any [section], or under [all]?
# A line below [cm4], [pi5] etc. applies only to that model.
config_has_line() {
    local file="$1" line="$2"
    [[ -f $file ]] || return 1
    awk -v want="$line" '
        BEGIN { section = "all" }
        { sub(/\r$/, "") }
        /^[[:space:]]*\[[^]]*\][[:space:]]*$/ {
            section = tolower($0); gsub(/[][[:space:]]/, "", section); next
        }
        section == "all" && $0 == want { found = 1 }
        END { exit found ? 0 : 1 }' "$file"
}

# The [section] the end of config.txt is in ("all" if none): appended lines land there.
config_last_section() {
    local file="$1"
    [[ -f $file ]] || { printf 'all\n'; return 0; }
    awk '
        BEGIN { section = "all" }
        { sub(/\r$/, "") }
        /^[[:space:]]*\[[^]]*\][[:space:]]*$/ {
            section = tolower($0); gsub(/[][[:space:]]/, "", section)
        }
        END { print section }' "$file"
}

# Add a line to config.txt so that it applies to every model: if the file ends
# inside a model filter such as [cm4] or [pi5], open an [all] section first.
ensure_config_line() {
    local file="$root$1" line="$2" section
    if config_has_line "$file" "$line"; then
        say "= $file already has (for all models): $line"
        return 0
    fi
    section="$(config_last_section "$file")"
    if [[ $section != all ]]; then
        say "+ append to $file: [all]   (the file ends inside [$section])"
        ((dry_run)) || printf '[all]\n' >>"$file"
    fi
    say "+ append to $file: $line"
    ((dry_run)) && return 0
    printf '%s\n' "$line" >>"$file"
    reboot_needed=1
}

have() { command -v "$1" >/dev/null 2>&1; }

# Is the running root filesystem a RAM overlay? Then anything written now is
# gone at the next reboot. With OANQUAN_ROOT (tests) only its proc/cmdline counts.
overlay_active() {
    local cmdline="$root/proc/cmdline"
    if [[ -r $cmdline ]] && grep -qE '(^| )overlayroot=tmpfs' "$cmdline"; then
        return 0
    fi
    [[ -z $root ]] && [[ $(findmnt --noheadings --output FSTYPE / 2>/dev/null) == overlay ]]
}

refuse_if_overlay() {
    overlay_active || return 0
    local why="the root filesystem is a read-only overlay (RAM): every change this run"
    why+=" makes would be lost at the next reboot. Run: sudo $0 --overlay-off; sudo reboot;"
    why+=" then run the installer again"
    ((dry_run)) || die "$why"
    warn "$why"
}

# Scratch directories made by a real run; removed however the script ends.
readonly TMPDIR_STAGE=SCRATCH_COPY_OF_CHECKOUT
staged=()
cleanup() { ((${#staged[@]} == 0)) || rm -rf "${staged[@]}"; }
trap cleanup EXIT

boot_file() {
    # Bookworm and later mount the boot partition at /boot/firmware.
    local name="$1"
    if [[ -e $root/boot/firmware/$name ]]; then
        printf '/boot/firmware/%s\n' "$name"
    elif [[ -e $root/boot/$name ]]; then
        printf '/boot/%s\n' "$name"
    else
        printf '/boot/firmware/%s\n' "$name"
    fi
}

os_codename() {
    local f="$root/etc/os-release"
    [[ -r $f ]] || f=/etc/os-release
    # shellcheck source=/dev/null
    (. "$f" && printf '%s\n' "${VERSION_CODENAME:-unknown}")
}

preflight() {
    step "Preflight: system, architecture, privileges"
    local codename arch
    codename="$(os_codename)"
    arch="$(uname -m)"
    say "OS codename: $codename; architecture: $arch; source: $src"
    case "$codename" in
        bookworm | trixie) ;;
        *)
            ((dry_run)) || die "Raspberry Pi OS Bookworm or Trixie required, found '$codename'"
            warn "not Bookworm/Trixie ('$codename'): continuing because this is a dry run"
            ;;
    esac
    if [[ $arch != aarch64 ]]; then
        warn "64-bit Raspberry Pi OS (aarch64) is the tested target, found $arch;" \
            "on armv7l OpenCV wheels are missing (use apt python3-opencv)"
    fi
    if ((!dry_run)) && [[ $(id -u) -ne 0 ]]; then
        die "run as root (sudo $0), or use --dry-run to see the steps"
    fi
    [[ -f $src/pyproject.toml ]] || die "no pyproject.toml in $src: run from a checkout"
    ((overlay_off)) || refuse_if_overlay
}

install_apt_packages() {
    step "Install system packages (apt)"
    run env DEBIAN_FRONTEND=noninteractive apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${APT_PACKAGES[@]}"
}

enable_interfaces() {
    step "Enable I2C (OLED) and the camera"
    local config
    config="$(boot_file config.txt)"
    if have raspi-config; then
        # nonint mode: 0 means "enabled"/"enable". do_i2c loads i2c-dev now,
        # sets dtparam=i2c_arm=on and adds i2c-dev to /etc/modules.
        if [[ $(raspi-config nonint get_i2c) == 0 ]]; then
            say "= I2C already enabled"
        else
            run raspi-config nonint do_i2c 0
            reboot_needed=1
        fi
    else
        warn "raspi-config not found: editing $config and /etc/modules-load.d directly"
        ensure_config_line "$config" "dtparam=i2c_arm=on"
        ensure_line /etc/modules-load.d/oanquan.conf "i2c-dev"
    fi
    # 400 kHz: the default 100 kHz caps a full OLED frame at ~10 fps.
    ensure_config_line "$config" "dtparam=i2c_arm_baudrate=400000"
    # libcamera finds CSI modules (Camera Module 3 etc.) by this; default on
    # fresh images, but older or edited config.txt files may lack it.
    ensure_config_line "$config" "camera_auto_detect=1"
}

enable_watchdog() {
    step "Hardware watchdog: systemd pets the SoC watchdog (a frozen kernel reboots)"
    # systemd leaves RuntimeWatchdogSec off by default and Raspberry Pi OS does
    # not set it everywhere: without it a hung kernel is a dark kiosk until
    # someone pulls the plug. RebootWatchdogSec bounds a reboot that hangs.
    write_file "$WATCHDOG_DROPIN" 0644 root:root <<EOF
# Written by systemd/install.sh: reboot if the kernel or PID 1 stops answering.
# Check: systemctl show -p RuntimeWatchdogUSec   (15s once active)
[Manager]
RuntimeWatchdogSec=$RUNTIME_WATCHDOG
RebootWatchdogSec=2min
EOF
    # Re-executing PID 1 makes it read system.conf.d now instead of at the next boot.
    run systemctl daemon-reexec
}

disable_swap() {
    step "No swap file on the SD card"
    # Bookworm's dphys-swapfile keeps /var/swap on the SD card: constant wear,
    # and under the overlay it would sit in RAM anyway. 2 GB+ of RAM is enough.
    if [[ -e $root/usr/sbin/dphys-swapfile || -e $root/sbin/dphys-swapfile ]]; then
        run dphys-swapfile swapoff
        run dphys-swapfile uninstall
        run systemctl disable --now dphys-swapfile.service
    else
        say "= dphys-swapfile not installed (no swap file on the card; zram lives in RAM)"
    fi
}

create_user() {
    step "Create the service user '$SERVICE_USER' in ${HW_GROUPS[*]}"
    local group
    for group in "${HW_GROUPS[@]}"; do
        if getent group "$group" >/dev/null; then
            say "= group $group exists"
        else
            # Pi OS has all three; a bare Debian may lack gpio/i2c.
            run groupadd --system "$group"
        fi
    done
    if id "$SERVICE_USER" >/dev/null 2>&1; then
        say "= user $SERVICE_USER exists"
    else
        run useradd --system --user-group --home-dir /var/lib/oanquan --no-create-home \
            --shell /usr/sbin/nologin --comment "O an quan referee" "$SERVICE_USER"
    fi
    local IFS=,
    run usermod --append --groups "${HW_GROUPS[*]}" "$SERVICE_USER"
}

system_numpy() {
    /usr/bin/python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true
}

make_venv() {
    step "Create the app's venv in $VENV (system Python, --system-site-packages)"
    if [[ -x $root$VENV/bin/python ]]; then
        say "= $VENV exists"
    else
        # The system interpreter, never pyenv/uv: only it sees apt's picamera2.
        run /usr/bin/python3 -m venv --system-site-packages "$root$VENV"
    fi
}

install_app() {
    step "Install the app from $src into the venv"
    local codename numpy_version opencv
    codename="$(os_codename)"
    numpy_version="$(system_numpy)"
    if [[ -z $numpy_version ]]; then
        ((dry_run)) || die "the system numpy (python3-numpy) is not importable"
        numpy_version="SYSTEM_NUMPY_VERSION"
        warn "no system numpy here; the real install pins the one apt installed"
    fi
    case "$codename" in
        trixie) opencv="opencv-python-headless>=4.12,<5" ;;
        *) opencv="opencv-python-headless==4.11.0.86" ;;
    esac
    write_file "$PREFIX/constraints.txt" 0644 root:root <<EOF
# Written by systemd/install.sh: keep apt's numpy (picamera2 is built against it).
numpy==$numpy_version
$opencv
gpiozero>=2.0.1.post3
# page_address_offset (display.sh1106_column_offset) exists from luma.oled 3.16.0;
# older ones ignore it silently. A constraint also upgrades an existing venv.
luma.oled>=3.16.0
EOF
    # Build from a scratch copy: setuptools leaves build/ and *.egg-info in the
    # source tree, which would be root-owned files in the user's checkout.
    stage="$TMPDIR_STAGE"
    if ((dry_run)); then
        say "+ copy $src (without .git, .venv, build and caches) to a scratch directory"
    else
        stage="$(mktemp -d)"
        staged+=("$stage")
        tar -C "$src" --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./out \
            --exclude='./*.egg-info' --exclude='./.*_cache' --exclude=./.hypothesis \
            --exclude=__pycache__ -cf - . | tar -C "$stage" -xf -
    fi
    run "$root$VENV/bin/python" -m pip install --disable-pip-version-check --upgrade \
        --upgrade-strategy only-if-needed --constraint "$root$PREFIX/constraints.txt" "$stage"
    # The venv is read-only under ProtectSystem=strict: compile once now.
    run "$root$VENV/bin/python" -m compileall -q "$root$VENV/lib"
    run install -D -m 0644 "$src/hardware.md" "$root$DOC_DIR/hardware.md"
    # `oanquan selftest` / `oanquan calibrate` on the PATH for staff.
    run ln -sfn "$VENV/bin/oanquan" "$root/usr/local/bin/oanquan"
}

# The engine's typed hot modules, compiled with mypyc where the Pi has a C
# compiler and Python's headers: about 2.4x the search nodes per second
# (bench/engine.py --compare), byte-for-byte the same moves. The pure-Python
# modules stay installed beside the compiled ones, and a build that fails or
# does not import is removed again, so the AI never depends on a compiler.
readonly COMPILED_ENGINE=(engine/core.py engine/evaluate.py engine/search.py)

compile_engine() {
    step "Compile the engine core with mypyc (optional: needs a C compiler)"
    if ((!compile)); then
        say "= skipped (--no-compile): the pure-Python engine is used"
        return 0
    fi
    local cc headers site tools="$stage-mypyc-tools"
    cc="$(command -v cc || command -v gcc || true)"
    headers="$(/usr/bin/python3 -c 'import os, sysconfig; print(int(os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))))' 2>/dev/null || echo 0)"
    if [[ -z $cc || $headers != 1 ]]; then
        say "= no C compiler or Python headers: the pure-Python engine is used"
        say "  (sudo apt install gcc python3-dev, then run this again, for a faster AI)"
        return 0
    fi
    site="$VENV/lib/python3/site-packages"
    if ((!dry_run)); then
        site="$("$root$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    fi
    ((dry_run)) || staged+=("$tools")
    run /usr/bin/python3 -m venv "$tools"
    run "$tools/bin/python" -m pip install --disable-pip-version-check --quiet mypy
    say "+ cd $stage && $tools/bin/mypyc ${COMPILED_ENGINE[*]}"
    if ((dry_run)); then
        say "+ install the built engine/*.so and the mypyc runtime library into $site"
        say "+ check that engine.core imports compiled; otherwise remove the .so files again"
        return 0
    fi
    if ! (cd "$stage" && "$tools/bin/mypyc" "${COMPILED_ENGINE[@]}" >/dev/null); then
        warn "mypyc failed: the pure-Python engine is used"
        return 0
    fi
    local built=()
    mapfile -t built < <(cd "$stage" && ls engine/*.so ./*__mypyc*.so 2>/dev/null)
    local f
    for f in "${built[@]}"; do
        run install -D -m 0644 "$stage/$f" "$site/${f#./}"
    done
    # From / so that the checkout itself is not on sys.path.
    if ! (cd / && "$root$VENV/bin/python" -c 'import engine.core as c, sys; sys.exit(0 if c.__file__.endswith(".so") else 1)'); then
        warn "the compiled engine does not import: removed, the pure-Python engine is used"
        for f in "${built[@]}"; do
            run rm -f "$site/${f#./}"
        done
    fi
}

install_config() {
    step "Install the configuration $CONFIG_DIR/config.toml"
    # 0644 root:root: root edits it; the service and `oanquan selftest`, run by
    # any user, read it. It holds no secrets.
    local dest="$root$CONFIG_DIR/config.toml" mode
    if [[ -e $dest ]]; then
        say "= $dest exists: keeping local edits (new defaults: $src/systemd/config.toml)"
        mode="$(stat -c '%a %U:%G' "$dest" 2>/dev/null || true)"
        if [[ $mode != "644 root:root" ]]; then
            run chmod 0644 "$dest"
            run chown root:root "$dest"
        fi
    else
        run install -D -m 0644 -o root -g root "$src/systemd/config.toml" "$dest"
    fi
}

install_unit() {
    step "Install and enable the systemd unit"
    run install -D -m 0644 "$src/systemd/oanquan.service" "$root$UNIT_PATH"
    run systemctl daemon-reload
    run systemctl enable oanquan.service
    if ((start)); then
        run systemctl restart oanquan.service
    else
        say "= not starting (--no-start)"
    fi
}

selftest() {
    step "Self-test as the service user"
    if ((start)); then
        run systemctl stop oanquan.service
    fi
    # Same user, groups and config as the service; a failure prints what to
    # fix. lgpio writes FIFOs into the working directory (LG_WD): /tmp, since
    # the checkout is not writable by the service user.
    local cmd=(env -C /tmp runuser -u "$SERVICE_USER" -- env LG_WD=/tmp
        GPIOZERO_PIN_FACTORY=lgpio "$root$VENV/bin/oanquan" selftest
        --config "$root$CONFIG_DIR/config.toml")
    if ! run "${cmd[@]}"; then
        warn "selftest found problems (above); the service is installed anyway"
    fi
    if ((start)); then
        run systemctl start oanquan.service
    fi
}

# recurse=0: a separate data partition mounted at /var/lib/oanquan stays
# writable instead of being overlaid too (Bookworm overlays every mount).
overlay_recurse0() {
    local cmdline="$1"
    if [[ -f $root$cmdline ]] && grep -q 'overlayroot=tmpfs:recurse=0' "$root$cmdline"; then
        say "= $cmdline already has overlayroot=tmpfs:recurse=0"
    else
        run sed -i -E 's/(^| )overlayroot=tmpfs( |$)/\1overlayroot=tmpfs:recurse=0\2/' \
            "$root$cmdline"
    fi
}

# raspi-config's disable_overlayfs removes only "overlayroot=tmpfs " (a space
# right after tmpfs): give it back that form first, let raspi-config do its
# part, then remove whatever is left, so turning the overlay off never fails
# silently.
overlay_restore_plain() {
    local cmdline="$1"
    run sed -i -E -e 's/(^| )overlayroot=tmpfs:[^ ]*( |$)/\1overlayroot=tmpfs\2/' \
        -e 's/(^| )overlayroot=tmpfs$/\1overlayroot=tmpfs /' "$root$cmdline"
}

overlay_strip() {
    local cmdline="$1"
    if [[ -f $root$cmdline ]] && ! grep -qE '(^| )overlayroot=' "$root$cmdline"; then
        say "= $cmdline has no overlayroot= left"
        return 0
    fi
    run sed -i -E -e 's/(^| )overlayroot=[^ ]*( |$)/\1/g' -e 's/^ +//' -e 's/ +$//' \
        "$root$cmdline"
}

disable_overlay() {
    step "Writable root again (--overlay-off): takes effect after a reboot"
    local cmdline boot
    cmdline="$(boot_file cmdline.txt)"
    boot="$(dirname "$cmdline")"
    # enable_bootro mounts the boot partition read-only; cmdline.txt lives there.
    run mount -o remount,rw "$root$boot"
    overlay_restore_plain "$cmdline"
    if have raspi-config; then
        run raspi-config nonint disable_overlayfs
    else
        warn "raspi-config not found: editing $cmdline only"
    fi
    overlay_strip "$cmdline"
    say "After the reboot the root is writable. The boot partition stays read-only"
    say "(/etc/fstab); to edit config.txt: sudo raspi-config nonint disable_bootro, reboot."
    say "When done: sudo $0 --overlay, then reboot."
    reboot_needed=1
}

# /dev/mmcblk0p3 -> "/dev/mmcblk0 3"; /dev/sda1 -> "/dev/sda 1".
split_partition() {
    local part="$1"
    if [[ $part =~ ^(/dev/(mmcblk|nvme|loop)[0-9]+(n[0-9]+)?)p([0-9]+)$ ]]; then
        printf '%s %s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[4]}"
    elif [[ $part =~ ^(/dev/(sd|vd)[a-z]+)([0-9]+)$ ]]; then
        printf '%s %s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}"
    else
        return 1
    fi
}

# Start (MiB) of the unallocated space at the end of DISK if it is >= 1 GiB, else nothing.
free_tail_mib() {
    local disk="$1"
    parted -sm "$disk" unit MiB print free 2>/dev/null | awk -F: '
        $5 ~ /^free/ { start = $2; size = $4 }
        END {
            gsub(/MiB/, "", start); gsub(/MiB/, "", size)
            if (size + 0 >= 1024) print int(start + 1)
        }'
}

setup_data_partition() {
    local part="$data_partition"
    step "Data partition $part for $STATE_DIR (ext4, noatime)"
    local split disk number start fstype label
    split="$(split_partition "$part")" ||
        die "--data-partition: expected a partition such as /dev/mmcblk0p3 or /dev/sda1, got '$part'"
    read -r disk number <<<"$split"
    # 1. Partition: only into free space after the last one (the running root
    #    filesystem cannot be shrunk from inside; hardware.md says how).
    if [[ -b $part ]]; then
        say "= $part exists"
    else
        start="$(free_tail_mib "$disk" || true)"
        if [[ -z $start ]]; then
            ((dry_run)) || die "$part does not exist and $disk has no free space (>= 1 GiB)" \
                "after its last partition: shrink the root partition first (hardware.md," \
                "'Data partition') or use a USB stick"
            warn "cannot read $disk's free space here; on the Pi the real run checks it"
            start="START_OF_FREE_SPACE"
        fi
        say "partition $number of $disk, from ${start} MiB to the end of the disk:"
        run parted -s "$disk" -- mkpart primary ext4 "${start}MiB" 100%
        run partprobe "$disk"
        run udevadm settle
    fi
    # 2. Filesystem: format only an empty partition; reuse our own.
    fstype="$(blkid -o value -s TYPE "$part" 2>/dev/null || true)"
    label="$(blkid -o value -s LABEL "$part" 2>/dev/null || true)"
    if [[ -z $fstype ]]; then
        run mkfs.ext4 -q -L "$DATA_LABEL" "$part"
    elif [[ $fstype == ext4 && $label == "$DATA_LABEL" ]]; then
        say "= $part already holds the $DATA_LABEL filesystem: keeping it"
    else
        die "$part holds a $fstype filesystem labelled '${label:-none}': not formatting it" \
            "(nothing changed). If it is really spare: sudo wipefs -a $part, then run again"
    fi
    # 3. Mount from fstab by label. noatime: reading a file costs no write;
    #    nofail: a dead partition must not stop the kiosk from booting.
    ensure_line /etc/fstab \
        "LABEL=$DATA_LABEL $STATE_DIR ext4 defaults,noatime,nofail,x-systemd.device-timeout=10s 0 2"
    if [[ -z $root ]] && findmnt --noheadings --mountpoint "$STATE_DIR" >/dev/null 2>&1; then
        say "= $STATE_DIR is already a mount point"
        return 0
    fi
    # 4. Keep what is already there (calibration made before this step).
    local scratch="/mnt/$DATA_LABEL"
    run mkdir -p "$root$scratch" "$root$STATE_DIR"
    run mount "$part" "$root$scratch"
    run cp -a "$root$STATE_DIR/." "$root$scratch/"
    run umount "$root$scratch"
    run systemctl daemon-reload
    run mount "$root$STATE_DIR"
    run chown "$SERVICE_USER:$SERVICE_USER" "$root$STATE_DIR"
    run chmod 0750 "$root$STATE_DIR"
}

enable_overlay() {
    step "Read-only root: volatile journald, read-only boot partition, overlayfs (--overlay)"
    # The system journal in RAM: nothing for a power cut to tear. Our own game
    # journal lives in /var/lib/oanquan and is fsync'd by the app.
    write_file "$JOURNALD_DROPIN" 0644 root:root <<'EOF'
# Written by systemd/install.sh --overlay: keep the system journal in RAM.
[Journal]
Storage=volatile
RuntimeMaxUse=32M
EOF
    run systemctl restart systemd-journald.service
    if ! have raspi-config; then
        ((dry_run)) || die "--overlay needs raspi-config (Raspberry Pi OS)"
        warn "raspi-config not found: the real run stops here"
    fi
    # The boot partition (config.txt, cmdline.txt) is FAT, the least power-cut
    # tolerant of all. enable_bootro edits /etc/fstab, so it must run before
    # the overlay is in use.
    run raspi-config nonint enable_bootro
    run raspi-config nonint enable_overlayfs
    overlay_recurse0 "$(boot_file cmdline.txt)"
    if [[ -z $data_partition ]] &&
        ! findmnt --noheadings --target "$root$STATE_DIR" --output TARGET 2>/dev/null |
        grep -qx "$STATE_DIR"; then
        warn "$STATE_DIR is on the root filesystem: after the reboot it is in RAM," \
            "so calibration and counters made from now on are lost at power-off." \
            "Calibrate before enabling the overlay, or give --data-partition PART."
    fi
    say "To turn it off again: sudo $0 --overlay-off, then reboot."
    reboot_needed=1
}

main() {
    while (($#)); do
        case "$1" in
            --dry-run) dry_run=1 ;;
            --overlay) overlay=1 ;;
            --overlay-off) overlay_off=1 ;;
            --data-partition)
                (($# >= 2)) || die "--data-partition needs a partition, e.g. /dev/mmcblk0p3"
                data_partition="$2"
                shift
                ;;
            --data-partition=*) data_partition="${1#*=}" ;;
            --no-start) start=0 ;;
            --no-compile) compile=0 ;;
            -h | --help) usage; return 0 ;;
            *) usage >&2; die "unknown argument: $1" ;;
        esac
        shift
    done
    ((overlay && overlay_off)) && die "--overlay and --overlay-off: choose one"
    ((dry_run)) && say "DRY RUN: printing every step; nothing is changed."
    preflight
    if ((overlay_off)); then
        disable_overlay
        finish
        return 0
    fi
    install_apt_packages
    enable_interfaces
    enable_watchdog
    disable_swap
    create_user
    make_venv
    install_app
    compile_engine
    install_config
    if [[ -n $data_partition ]]; then
        setup_data_partition
    fi
    install_unit
    selftest
    if ((overlay)); then
        enable_overlay
    fi
    finish
}

finish() {
    say ""
    if ((dry_run)); then
        say "DRY RUN complete: nothing was changed."
    elif ((reboot_needed)); then
        say "Installed. Reboot now (sudo reboot) for the boot configuration to take effect."
    else
        say "Installed. Status: systemctl status oanquan; logs: journalctl -u oanquan -f"
    fi
}

# Sourcing the script (tests) defines the functions without running anything.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
