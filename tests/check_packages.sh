#!/usr/bin/env bash
# check_packages.sh BUILD - the Debian packages (ops/package/packaging.cmake)
# of a build folder: cpack makes xqf-worker, xqf-coordinator and xqf-keys;
# each is unpacked with dpkg -x into one temporary root (as a clean machine
# would have them, without running anything as root), every program runs
# its --help from there, the units' programs are where ExecStart says, the
# worker and coordinator packages create their user (postinst), and
# xqf-worker-setup makes a worker's key pair and settings and prints its
# public key.  Status 77 (skipped) without cpack or dpkg.
source "$(dirname "$0")/skip.sh"
set -u
build=$1
for tool in cpack dpkg dpkg-deb; do
    if ! command -v "$tool" >/dev/null; then
        xqf_skip packages "$tool is not installed"
    fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! (cd "$build" && cpack -G DEB -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1; then
    cat "$tmp/cpack.log"
    fail "cpack -G DEB failed"
fi
root=$tmp/root
for p in xqf-worker xqf-coordinator xqf-keys; do
    deb=$(ls "$tmp/pkg/${p}_"*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || fail "no package $p (cpack made: $(ls "$tmp/pkg"))"
    dpkg -x "$deb" "$root" || fail "dpkg -x $deb"
    echo "ok: $(basename "$deb"), $(stat -c %s "$deb") bytes, depends: $(dpkg-deb -f "$deb" Depends)"
done
for p in xqf-worker xqf-coordinator; do
    dpkg-deb -e "$tmp/pkg/${p}_"*.deb "$tmp/control-$p"
    grep -q 'useradd --system' "$tmp/control-$p/postinst" || fail "$p: no postinst creating the xqf user"
done
# the users each postinst makes (useradd, getent, install and systemctl stood in for): the
# dashboard's own, xqf-web, comes with the coordinator's package, as its unit's User= needs
mkdir -p "$tmp/fake"
printf '#!/bin/sh\nexit 2\n' > "$tmp/fake/getent"
printf '#!/bin/sh\nfor a; do last=$a; done; echo "$last" >> "%s/users"\n' "$tmp" > "$tmp/fake/useradd"
printf '#!/bin/sh\nexit 0\n' > "$tmp/fake/install"
cp "$tmp/fake/install" "$tmp/fake/systemctl"
chmod +x "$tmp/fake"/*
for p in xqf-worker xqf-coordinator; do
    rm -f "$tmp/users"
    PATH=$tmp/fake:$PATH DPKG_MAINTSCRIPT_PACKAGE=$p sh "$tmp/control-$p/postinst" configure || fail "$p: postinst failed"
    users=$(tr '\n' ' ' < "$tmp/users")
    want="xqf "
    [ $p = xqf-coordinator ] && want="xqf xqf-web xqf-builder xqf-signer xqf-auditor "
    [ "$users" = "$want" ] || fail "$p: postinst makes the users '$users', not '$want'"
done
grep -q '^User=xqf-web$' "$root/usr/lib/systemd/system/xqf-web.service" || fail "xqf-web.service does not run as xqf-web"
grep -q '^User=xqf-builder$' "$root/usr/lib/systemd/system/xqf-builder.service" ||
    fail "xqf-builder.service does not run as xqf-builder"
grep -q '^User=xqf-signer$' "$root/usr/lib/systemd/system/xqf-signer.service" ||
    fail "xqf-signer.service does not run as xqf-signer"
grep -q '^User=xqf-auditor$' "$root/usr/lib/systemd/system/xqf-auditor.service" ||
    fail "xqf-auditor.service does not run as xqf-auditor"
for prog in xqf-worker xqf-worker-setup xqf-coordinator xqf-tune xqf-web xqf-keys; do
    [ -x "$root/usr/bin/$prog" ] || fail "$prog is not in the packages"
    out=$(PATH=$root/usr/bin:$PATH "$root/usr/bin/$prog" --help 2>&1) || fail "$prog --help: status $?: $out"
    grep -q '^Usage: ' <<<"$out" || fail "$prog --help prints no usage: $out"
done
echo "ok: --help of every program from the unpacked root"
for unit in xqf-worker@.service xqf-coordinator.service xqf-web.service xqf-builder.service xqf-signer.service xqf-auditor.service; do
    f=$root/usr/lib/systemd/system/$unit
    [ -f "$f" ] || fail "no unit $unit"
    prog=$(grep '^ExecStart=' "$f" | grep -o '/usr/bin/xqf-[a-z-]*' | head -1)
    [ -n "$prog" ] && [ -x "$root$prog" ] || fail "$unit: ExecStart's program '$prog' is not installed"
done
grep -q '^CacheDirectory=xqf-worker' "$root/usr/lib/systemd/system/xqf-worker@.service" ||
    fail "the worker unit has no writable cache directory"
[ -f "$root/usr/share/xqf/books/default.book" ] || fail "no opening book"
echo "ok: units and their programs"

# xqf-worker-setup: a key pair, the settings, the public key printed; run again it keeps the key
echo "public dummy" > "$tmp/coordinator.key.pub"
setup() { PATH=$root/usr/bin:$PATH "$root/usr/bin/xqf-worker-setup" "$@"; }
out=$(setup --coordinator tcp://coordinator.example:5555 --server-key "$tmp/coordinator.key.pub" --dir "$tmp/etc") ||
    fail "xqf-worker-setup: status $?: $out"
key=$(sed -n 's/^Public key: //p' <<<"$out")
[ ${#key} -eq 40 ] || fail "xqf-worker-setup printed no public key: $out"
grep -qF "public $key" "$tmp/etc/worker.key.pub" || fail "the printed key is not worker.key.pub's"
[ "$(stat -c %a "$tmp/etc/worker.key")" = 600 ] || fail "worker.key is not mode 0600"
grep -qx 'XQF_COORDINATOR=tcp://coordinator.example:5555' "$tmp/etc/worker.env" || fail "worker.env: $(cat "$tmp/etc/worker.env")"
grep -q "^XQF_WORKER_ARGS=--curve-secret $tmp/etc/worker.key --server-key $tmp/etc/coordinator.key.pub" "$tmp/etc/worker.env" ||
    fail "worker.env: $(cat "$tmp/etc/worker.env")"
again=$(setup --coordinator tcp://coordinator.example:5555 --dir "$tmp/etc" 2>/dev/null) || fail "setup again: $again"
grep -qF "Public key: $key" <<<"$again" || fail "a second setup changed the key"
setup --dir "$tmp/etc" >/dev/null 2>&1
[ $? -eq 2 ] || fail "xqf-worker-setup without --coordinator must end with status 2"
echo "ok: xqf-worker-setup"
