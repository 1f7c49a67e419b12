# Shared helpers for the ops/ scripts (sourced, not run).
set -euo pipefail

XQF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
XQF_BUILD=${XQF_BUILD:-$XQF_ROOT/build}
XQF_BIN=$XQF_BUILD/bin

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# build [DIR] [cmake options...]: configure and build the Release tree (or another).
build() {
    local dir=${1:-$XQF_BUILD}
    shift || true
    cmake -S "$XQF_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$dir" -j "$(nproc)" >/dev/null
}

# A wall clock in seconds with microseconds (bash 5).
now() { printf '%s' "$EPOCHREALTIME"; }

# calc EXPR: floating-point arithmetic through awk (always present on Debian).
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
