#!/usr/bin/env bash
# Check systemd unit files the way CI and a reviewer would:
#
#   1. `systemd-analyze verify` must print nothing. verify exits 0 on many
#      real errors (an unknown Type=, a key in the wrong section) and only
#      prints a warning, so any output at all is a failure.
#   2. `systemd-analyze security --offline=yes` must rate the unit at or below
#      MAX_EXPOSURE (2.0 unless overridden).
#   3. shellcheck over systemd/*.sh, because these scripts run as root on a Pi.
#
# ExecStart= names /opt/oanquan/venv/bin/oanquan, which exists only on an
# installed Pi, and verify rejects a unit whose command is missing. Rather
# than editing the unit text, verify runs with --root= on a throwaway tree
# that holds an unmodified copy of the unit, the host's stock units (so
# multi-user.target etc. resolve) and a stub executable at each Exec path.
# Every other verify diagnostic is untouched.
#
# Usage: systemd/check-unit.sh [--install-deps] [UNIT...]
#   --install-deps  only install missing tools (apt, needs root), then exit
#   UNIT...         unit files to check (default: systemd/*.service)
# Environment: MAX_EXPOSURE (default 2.0).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
max_exposure="${MAX_EXPOSURE:-2.0}"

scratch=()
cleanup() { ((${#scratch[@]} == 0)) || rm -rf "${scratch[@]}"; }
trap cleanup EXIT

log() { printf 'check-unit: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

# Install any of the given Debian packages whose command is missing.
# Arguments come in pairs: command package.
ensure_tools() {
    local missing=()
    while (($# >= 2)); do
        command -v "$1" >/dev/null 2>&1 || missing+=("$2")
        shift 2
    done
    ((${#missing[@]} == 0)) && return 0
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        die "missing ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root"
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Print the absolute command path of every Exec*= line of a unit, minus the
# special prefixes (@ - : + !) systemd allows in front of the path.
exec_paths() {
    sed -n -E 's/^[[:space:]]*Exec[A-Za-z]+=[[:space:]]*[-@:+!]*([^[:space:]]+).*/\1/p' "$1" |
        grep '^/' | sort -u || true
}

stock_units_dir() {
    local d
    for d in /usr/lib/systemd/system /lib/systemd/system; do
        [[ -d $d ]] && { printf '%s\n' "$d"; return 0; }
    done
    die "no stock unit directory (/usr/lib/systemd/system) to verify against"
}

verify_unit() {
    local unit="$1" name root out path
    name="$(basename "$unit")"
    root="$(mktemp -d)"
    scratch+=("$root")
    mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd"
    cp -a "$(stock_units_dir)" "$root/usr/lib/systemd/system"
    cp "$unit" "$root/etc/systemd/system/$name"
    while IFS= read -r path; do
        [[ -n $path ]] || continue
        mkdir -p "$root$(dirname "$path")"
        printf '#!/bin/sh\nexit 0\n' >"$root$path"
        chmod 0755 "$root$path"
    done < <(exec_paths "$unit")
    if ! out="$(systemd-analyze verify --root="$root" "$name" 2>&1)" || [[ -n $out ]]; then
        printf '%s\n' "$out" >&2
        die "systemd-analyze verify $unit printed the diagnostics above"
    fi
    log "verify $unit: clean"
}

security_unit() {
    local unit="$1" out level
    out="$(systemd-analyze security --offline=yes "$unit" 2>&1)" || {
        printf '%s\n' "$out" >&2
        die "systemd-analyze security $unit failed"
    }
    level="$(printf '%s\n' "$out" | sed -n -E 's/.*Overall exposure level for [^:]*: ([0-9]+\.[0-9]+).*/\1/p')"
    [[ -n $level ]] || { printf '%s\n' "$out" >&2; die "no exposure level in the output"; }
    if awk -v l="$level" -v m="$max_exposure" 'BEGIN { exit !(l > m) }'; then
        printf '%s\n' "$out" | grep -E '^✗' >&2 || true
        die "$unit exposure level $level is above $max_exposure"
    fi
    log "security $unit: exposure level $level (limit $max_exposure)"
}

main() {
    local install_only=0 units=() unit
    while (($#)); do
        case "$1" in
            --install-deps) install_only=1 ;;
            -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; return 0 ;;
            -*) die "unknown option $1" ;;
            *) units+=("$1") ;;
        esac
        shift
    done
    ensure_tools systemd-analyze systemd shellcheck shellcheck
    ((install_only)) && return 0
    ((${#units[@]})) || units=("$here"/*.service)
    for unit in "${units[@]}"; do
        [[ -f $unit ]] || die "no such unit file: $unit"
        verify_unit "$unit"
        security_unit "$unit"
    done
    shellcheck "$here"/*.sh
    log "shellcheck systemd/*.sh: clean"
}

main "$@"
