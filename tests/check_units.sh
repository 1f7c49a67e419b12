#!/usr/bin/env bash
# check_units.sh BIN UNITS - the systemd units of ops/systemd (UNITS) pass
# `systemd-analyze verify` with no complaint at all (unknown or misspelt
# keys, bad values, a missing program), their /usr/local/bin programs
# pointed at BIN (verify checks that ExecStart's program is there; a
# template is verified as its instance @1).  And what verify cannot see: a
# unit that makes the file system read-only (ProtectSystem=strict) and
# runs xqf-worker must give it a writable build cache (CacheDirectory=,
# and --cache "$CACHE_DIRECTORY"), else the worker cannot start.  And
# every unit carries the sandboxing all of them share (HARDENING below:
# no new privileges, a read-only system, no homes, private /tmp and
# devices, kernel and control groups out of reach, no set-uid, a private
# umask): a unit added or edited without it fails here.  And the builder
# (build --serve: it runs testers' branches) runs as a user of its own:
# set, not the signer's (build --sign-serve: it holds the operator key)
# nor any other unit's, so that a branch out of its box reads no key and
# no other program's settings.
# Status 77 (skipped) without systemd-analyze: the Debian package systemd
# has it (ops/setup installs it).
source "$(dirname "$0")/skip.sh"
set -u
bin=$1 units=$2
if ! command -v systemd-analyze >/dev/null; then
    xqf_skip units "systemd-analyze is not installed (Debian package systemd; ops/setup installs it)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$units"/*.service; do
    name=$(basename "$f")
    sed "s|/usr/local/bin/|$bin/|g" "$f" > "$tmp/${name/@./@1.}"
done
bad=0
out=$(cd "$tmp" && systemd-analyze verify --man=no ./*.service 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
    printf 'systemd-analyze verify failed (status %d):\n%s\n' "$rc" "$out"
    bad=1
fi
for f in "$units"/*.service; do
    grep -q '^ProtectSystem=strict' "$f" && grep '^ExecStart=' "$f" | grep -q 'xqf-worker' || continue
    if ! grep -q '^CacheDirectory=' "$f" || ! grep '^ExecStart=' "$f" | grep -qF -- '--cache "$CACHE_DIRECTORY"'; then
        echo "$f: ProtectSystem=strict leaves xqf-worker no writable cache (CacheDirectory= and --cache \"\$CACHE_DIRECTORY\")"
        bad=1
    fi
done
HARDENING="NoNewPrivileges=true ProtectSystem=strict ProtectHome=true PrivateTmp=true PrivateDevices=true
ProtectKernelTunables=true ProtectKernelModules=true ProtectControlGroups=true RestrictSUIDSGID=true
LockPersonality=true UMask=0077"
for f in "$units"/*.service; do
    for line in $HARDENING; do
        grep -qxF "$line" "$f" || { echo "$f: lacks $line (every unit is sandboxed alike)"; bad=1; }
    done
done
user_of() { sed -n 's/^User=//p' "$1" | tail -1; }
builder=$(grep -l '^ExecStart=.*xqf-tune build --serve' "$units"/*.service | head -1)
signer=$(grep -l '^ExecStart=.*xqf-tune build --sign-serve' "$units"/*.service | head -1)
if [ -z "$builder" ] || [ -z "$signer" ]; then
    echo "no unit runs the builder (build --serve) or the signer (build --sign-serve)"
    bad=1
elif [ -z "$(user_of "$builder")" ] || [ -z "$(user_of "$signer")" ]; then
    echo "$builder, $signer: each names its User= (without, it runs as root)"
    bad=1
else
    for f in "$units"/*.service; do
        [ "$f" = "$builder" ] && continue
        if [ "$(user_of "$f")" = "$(user_of "$builder")" ]; then
            echo "$f runs as $(user_of "$f"), the builder's user: a branch out of its box would act as it"
            bad=1
        fi
    done
fi
[ $bad -eq 0 ] && echo "ok: $(ls "$units"/*.service | wc -l) units verified"
exit $bad
