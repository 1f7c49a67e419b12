#!/usr/bin/env bash
# check_backup.sh ROOT BUILD - a cluster gets its database back after its
# disk is lost (ops/backup, ops/restore, ops/pg archive; docs/cluster.md,
# "Backups that restore").
#
# A local cluster of its own (ops/cluster: PostgreSQL in BUILD/backup-test/pg
# archiving its WAL, a coordinator, one worker) plays an SPRT at fixed nodes
# that can only end by its cap of BACKUP_PAIRS pairs.  During the run, a base
# backup (ops/backup); then more results, a WAL segment switch and its
# archiving (the last archived point: A pairs counted); then more results
# (B pairs counted and acknowledged) that live only in the segment not yet
# archived; then the database is lost: the postmaster and its processes
# killed -9, the data folder deleted, and the operators' public key file
# with it.  The coordinator is stopped; ops/restore must refuse (exit 1, no
# data folder made) a backup without its MANIFEST, one with a file changed
# and one with its base backup changed; then the real restore: R pairs,
# A <= R < B (the results after the archived point are gone, their games
# with them), the key file put back with its SHA-256, and a second
# ops/restore refused over the live folder.  The coordinator back, and a
# second worker, the run must finish exactly as an uninterrupted one: its
# pairs its cap, W+D+L twice its pairs, the pentanomial its pairs, its
# tasks' pairs and their leases' results its pairs, every task done, no two
# tasks over the same pair, and each of the run's 2 x cap games stored once
# (games 0 .. 2 cap - 1).
# The lost results come back by being played again, never resent: each lost
# pair must be counted under a lease claimed after the restore.  How: a
# worker's report after the restore is answered stale (a lease the restored
# database never had) or invalid (its records start past what the restored
# lease counts) and the worker drops that task; the restored leases of tasks
# finished in the lost part expire one lease after the coordinator's start
# and are given again from the pairs the restored database counts.  The test
# prints how many of each.  Skipped (exit 77) without PostgreSQL's initdb,
# pg_basebackup and pg_verifybackup.  About 2-3 minutes.
source "$(dirname "$0")/skip.sh"
set -u
ROOT=$(cd "$1" && pwd) BUILD=$(cd "$2" && pwd)
PG_BIN=${XQF_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
for p in initdb pg_basebackup pg_verifybackup; do
    [ -n "$PG_BIN" ] && [ -x "$PG_BIN/$p" ] || xqf_skip backup_restore "PostgreSQL's $p is missing (ops/setup installs it)"
done
for p in xqf-coordinator xqf-worker xqf-tune xqf-web xqf-keys; do
    [ -x "$BUILD/bin/$p" ] || { echo "backup_restore: $BUILD/bin/$p is not built"; exit 1; }
done

# 128: on a quiet machine one worker plays about 10 pairs a second at 500 nodes, and the backup and
# the archiving take 3-5 s of it: 48 pairs counted at the loss there (a cap of 48 was reached first)
PAIRS=${BACKUP_PAIRS:-128}
NODES=${BACKUP_NODES:-500}
W=$BUILD/backup-test
ARCH=$W/archive
# as root the server runs as postgres, which may not reach a checkout in a folder of mode 0700
# (.ci/run's mktemp -d): ops/pg then keeps its cluster in /var/tmp, and the archive goes there too
mkdir -p "$W"
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$W" 2>/dev/null; then
    ARCH=/var/tmp/xqf-backup-archive-$(printf '%s' "$W" | sha256sum | cut -c1-16)
    rm -rf "$ARCH"
fi
export XQF_BUILD=$BUILD XQF_PG_DIR=$W/pg XQF_PG_ARCHIVE=$ARCH XQF_PG_ARCHIVE_TIMEOUT=600
export XQF_CLUSTER_DIR=$W/cluster XQF_CLUSTER_BUILD=0 XQF_LEASE=6
free_port() {
    local p
    for p in $(seq "$1" "$(( $1 + 200 ))"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
    echo "no free port from $1" >&2; exit 1
}
XQF_PORT=$(free_port 5850) || exit 1
XQF_WEB_PORT=$(free_port 8350) || exit 1
export XQF_PORT XQF_WEB_PORT
LOG=$W/test.log
T0=$EPOCHREALTIME
t() { awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
note() { echo "backup_restore [$(t) s]: $*" | tee -a "$LOG"; }
fail() { note "FAILED: $*"; exit 1; }

"$ROOT/ops/cluster" stop >/dev/null 2>&1 || true
"$ROOT/ops/pg" remove >/dev/null 2>&1 || true
rm -rf "$W"
mkdir -p "$W"
cleanup() {
    "$ROOT/ops/cluster" stop >/dev/null 2>&1 || true
    "$ROOT/ops/pg" stop >/dev/null 2>&1 || true
    case $ARCH in /var/tmp/xqf-backup-archive-*) rm -rf "$ARCH" ;; esac
}
trap cleanup EXIT

# one worker until the loss (the run must not reach its cap before it, however fast this machine is
# today), two after the restore
DB=$("$ROOT/ops/cluster" start 1 2>>"$LOG" | tail -n 1) || fail "ops/cluster start (see $LOG)"
[[ $DB == host=* ]] || fail "ops/cluster start printed no conninfo (see $LOG)"
sql() { "$PG_BIN/psql" -X -q -tA -F '|' "$DB" -c "$1" 2>>"$LOG"; }
note "cluster up (coordinator :$XQF_PORT, 1 worker, WAL archived into $ARCH, logs in $W)"

awk -v n="$PAIRS" '!/^#/ && NF { print; if (++k == n) exit }' "$ROOT/ops/books/default.book" > "$W/book"
RUN=$("$BUILD/bin/xqf-tune" sprt new --db "$DB" --base "" --test RookMg=700 --nodes "$NODES" --book "$W/book" \
      --max-pairs "$PAIRS" --pairs-per-task 2 --elo0 -500 --elo1 500 --name backup-restore 2>>"$LOG") \
    || fail "xqf-tune sprt new (see $LOG)"
note "run $RUN: $PAIRS pairs at $NODES nodes, 2 pairs a task"

pairs() { sql "SELECT pairs FROM runs WHERE id = $RUN"; }
# wait_pairs N SECONDS: until the run counts N pairs
wait_pairs() {
    local end=$(( $(t) + $2 )) p
    while [ "$(t)" -lt "$end" ]; do
        p=$(pairs)
        [ -n "$p" ] && [ "$p" -ge "$1" ] && return 0
        [ "$p" != "$PAIRS" ] || fail "the run reached its cap of $PAIRS pairs before the database was lost: raise BACKUP_PAIRS"
        sleep 0.5
    done
    fail "the run did not reach $1 pairs within $2 s (at ${p:-?})"
}

wait_pairs 2 120
"$ROOT/ops/backup" "$W/bk" > "$W/backup.out" 2>&1 || { cat "$W/backup.out"; fail "ops/backup"; }
note "$(grep 'backup: .*base backup .* in ' "$W/backup.out" | sed 's/^== //')"
after_backup=$(pairs)

# the last archived point: A pairs counted before a segment switch, that segment archived
wait_pairs $((after_backup + 2)) 120
A=$(pairs)
seg=$(sql "SELECT pg_walfile_name(pg_switch_wal())")
for _ in $(seq 1 60); do
    [ "$(sql "SELECT last_archived_wal >= '$seg' FROM pg_stat_archiver")" = t ] && break
    sleep 0.5
done
[ "$(sql "SELECT last_archived_wal >= '$seg' FROM pg_stat_archiver")" = t ] || fail "segment $seg not archived within 30 s"
note "segment $seg archived with $A pairs counted"

# results acknowledged after it, in the segment not archived
wait_pairs $((A + 4)) 120
acked=$(sql "SELECT count(*) FROM results r JOIN tasks t ON t.id = r.task_id WHERE t.run_id = $RUN")

# the disk lost: the postmaster and its processes killed -9, the data folder deleted
HOME_DIR=$("$ROOT/ops/pg" home)
pm=$(head -n 1 "$HOME_DIR/data/postmaster.pid")
kids=$(ps -o pid= --ppid "$pm" | tr -d ' ')
# the pairs counted and the games stored, read last before the kill
IFS='|' read -r B Gb <<< "$(sql "SELECT pairs, (SELECT coalesce(string_agg(game::text, ',' ORDER BY game), '')
                                 FROM games WHERE run_id = $RUN) FROM runs WHERE id = $RUN")"
# shellcheck disable=SC2086
kill -KILL "$pm" $kids
rm -rf "$HOME_DIR/data"
[ "$B" -lt "$PAIRS" ] || fail "the run reached its cap of $PAIRS pairs before the database was lost: raise BACKUP_PAIRS"
note "database lost at $B pairs counted ($acked leases reported): postmaster $pm and its $(echo $kids | wc -w) processes killed -9, $HOME_DIR/data deleted"

# the coordinator stopped while the database is restored, then back
cpid=$(cat "$W/cluster/coordinator.pid")
kill -TERM "$cpid"
for _ in $(seq 1 100); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$cpid" 2>/dev/null && kill -KILL "$cpid"
rm -f "$W/cluster/coordinator.pid"

# refusals, before the real restore: a backup cut short, a file of it changed, its base backup changed
refuse() {   # refuse WHAT PATTERN BACKUP: ops/restore exits 1 saying PATTERN, and makes no data folder
    local out
    out=$("$ROOT/ops/restore" "$3" 2>&1) && fail "ops/restore restored $1"
    grep -q -- "$2" <<< "$out" || { echo "$out"; fail "ops/restore refused $1 without saying '$2'"; }
    [ ! -e "$HOME_DIR/data" ] || fail "ops/restore refused $1 but made $HOME_DIR/data"
    note "refused $1: $(grep '^error' <<< "$out" | tail -n 1)"
}
cp -al "$W/bk" "$W/bk-cut" && rm "$W/bk-cut/MANIFEST"
refuse "a backup without its MANIFEST (cut short)" "no MANIFEST" "$W/bk-cut"
cp -al "$W/bk" "$W/bk-file"
f=$(find "$W/bk-file/files" -type f -name '*.pub' | head -n 1)
cp --remove-destination "$f" "$f.new" && echo "sign-public 00" >> "$f.new" && mv "$f.new" "$f"
refuse "a file whose SHA-256 is not the manifest's" "SHA-256 or size not that of the MANIFEST" "$W/bk-file"
cp -al "$W/bk" "$W/bk-base"
cp --remove-destination "$W/bk-base/base/PG_VERSION" "$W/bk-base/base/PG_VERSION.new"
echo 1 >> "$W/bk-base/base/PG_VERSION.new" && mv "$W/bk-base/base/PG_VERSION.new" "$W/bk-base/base/PG_VERSION"
refuse "a base backup changed after pg_basebackup" "pg_verifybackup: the base backup in" "$W/bk-base"
rm -rf "$W/bk-cut" "$W/bk-file" "$W/bk-base"

# a file outside PostgreSQL lost too: the operators' public key the workers trust
pub=$W/cluster/operator.key.pub
pub_sha=$(sha256sum "$pub" | cut -d' ' -f1)
rm "$pub"
restored_at=$EPOCHREALTIME
"$ROOT/ops/restore" "$W/bk" > "$W/restore.out" 2>&1 || { cat "$W/restore.out"; fail "ops/restore"; }
grep 'restore: ' "$W/restore.out" | sed 's/^== /    /' | tee -a "$LOG"
R=$(pairs)
grep -q "files: 1 put back, [0-9]* already there and the same, 0 differ" "$W/restore.out" \
    && [ "$(sha256sum "$pub" 2>/dev/null | cut -d' ' -f1)" = "$pub_sha" ] \
    || fail "ops/restore did not put $pub back as it was"
out=$("$ROOT/ops/restore" "$W/bk" 2>&1) && fail "ops/restore ran over the live data folder"
grep -q "live data folder" <<< "$out" || { echo "$out"; fail "ops/restore over a live data folder did not say so"; }
note "refused the live data folder: $(grep '^error' <<< "$out" | tail -n 1)"
note "restored: $R pairs counted (archived point $A, lost $B): $((B - R)) acknowledged pairs gone with the disk"
[ "$R" -ge "$A" ] || fail "the restore lost archived results: $R pairs, $A at the archived point"
[ "$R" -lt "$B" ] || fail "nothing was lost ($R pairs of $B): the test did not put results past the archive"
# the lost pairs: those whose games were stored before the loss and are not in the restored database
Gr=$(sql "SELECT coalesce(string_agg(game::text, ',' ORDER BY game), '') FROM games WHERE run_id = $RUN")
lost=$(comm -23 <(tr , '\n' <<< "$Gb" | sort) <(tr , '\n' <<< "$Gr" | sort) | awk '{ print int($1 / 2) }' | sort -un | paste -sd,)
nlost=$(awk -F, '{ print NF }' <<< "$lost")
[ "$nlost" = $((B - R)) ] || fail "$nlost pairs' games gone, $((B - R)) pairs' counts: the games and counts were not lost together"
note "the lost pairs: $lost"
"$ROOT/ops/cluster" start 2 >/dev/null 2>>"$LOG" || fail "ops/cluster start after the restore"
note "the coordinator back, and a second worker"

end=$(( $(t) + 420 ))
while [ "$(t)" -lt "$end" ]; do
    [ "$(sql "SELECT state FROM runs WHERE id = $RUN")" = finished ] && break
    sleep 1
done
since=$(awk -v a="$restored_at" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
note "run $RUN: $(sql "SELECT state || ', ' || coalesce(verdict, '') || ', ' || pairs || ' pairs' FROM runs WHERE id = $RUN") ($since s after the restore began)"

IFS='|' read -r state verdict maxp p games penta tpairs tnot rpairs ngames ndistinct gmin gmax npairs overlap <<< "$(sql "
    SELECT r.state, coalesce(r.verdict, ''), r.max_pairs, r.pairs, r.wins + r.draws + r.losses,
           r.ll + r.ld + r.dd + r.wd + r.ww,
           (SELECT coalesce(sum(done_pairs), 0) FROM tasks WHERE run_id = r.id),
           (SELECT count(*) FROM tasks WHERE run_id = r.id AND state <> 'done'),
           (SELECT coalesce(sum(x.pairs), 0) FROM results x JOIN tasks t ON t.id = x.task_id WHERE t.run_id = r.id),
           (SELECT count(*) FROM games WHERE run_id = r.id),
           (SELECT count(DISTINCT game) FROM games WHERE run_id = r.id),
           (SELECT coalesce(min(game), -1) FROM games WHERE run_id = r.id),
           (SELECT coalesce(max(game), -1) FROM games WHERE run_id = r.id),
           (SELECT count(DISTINCT game / 2) FROM games WHERE run_id = r.id),
           (SELECT count(*) FROM tasks a JOIN tasks b ON a.run_id = b.run_id AND a.id < b.id
             AND a.first_pair < b.first_pair + b.n_pairs AND b.first_pair < a.first_pair + a.n_pairs
             WHERE a.run_id = r.id)
      FROM runs r WHERE r.id = $RUN")"
why=()
[ "$state" = finished ] && [ "$verdict" = "max pairs" ] || why+=("state '$state' verdict '$verdict'")
[ "$p" = "$PAIRS" ] && [ "$maxp" = "$PAIRS" ] || why+=("pairs $p of $PAIRS")
[ "$games" = $((2 * PAIRS)) ] || why+=("W+D+L $games, not 2 x $PAIRS")
[ "$penta" = "$PAIRS" ] || why+=("pentanomial $penta")
[ "$tpairs" = "$PAIRS" ] || why+=("tasks' pairs $tpairs")
[ "$tnot" = 0 ] || why+=("$tnot tasks not done")
[ "$rpairs" = "$PAIRS" ] || why+=("leases' results $rpairs pairs (a pair counted twice or lost)")
[ "$ngames" = $((2 * PAIRS)) ] && [ "$ndistinct" = $((2 * PAIRS)) ] && [ "$npairs" = "$PAIRS" ] \
    && [ "$gmin" = 0 ] && [ "$gmax" = $((2 * PAIRS - 1)) ] \
    || why+=("games stored $ngames ($ndistinct distinct, $npairs pairs, $gmin..$gmax)")
[ "$overlap" = 0 ] || why+=("$overlap pairs of tasks over the same pairs")

# how the lost results came back
invalid=$(cat "$W"/cluster/worker-*.log | grep -c 'found our counts invalid' || true)
stale=$(cat "$W"/cluster/worker-*.log | grep -c 'stopped by the coordinator (stale)' || true)
expired=$(awk '/expired leases re-queued/ { n += $4 } END { print n + 0 }' "$W/cluster/coordinator.log")
reissued=$(sql "SELECT coalesce(sum(attempts - 1), 0) FROM tasks WHERE run_id = $RUN")
after=$(sql "SELECT count(*) || '|' || coalesce(sum(x.pairs), 0) FROM results x JOIN tasks t ON t.id = x.task_id
             WHERE t.run_id = $RUN AND x.created_at >= to_timestamp($restored_at)")
note "came back: $((B - R)) acknowledged pairs lost; after the restore the workers' reports were answered invalid $invalid and stale $stale times (each worker dropped that task), $expired restored leases expired and were re-queued, $reissued leases given again over the run; ${after%|*} leases made after the restore played ${after#*|} of the $((PAIRS - R)) pairs missing"
# each lost pair counted again under a lease claimed after the restore: played again, not resent
again=$(sql "SELECT count(*) FROM unnest('{$lost}'::bigint[]) k
               JOIN tasks t ON t.run_id = $RUN AND k >= t.first_pair AND k < t.first_pair + t.n_pairs
               JOIN results x ON x.task_id = t.id AND k - t.first_pair >= x.base_pairs
                             AND k - t.first_pair < x.base_pairs + x.pairs
              WHERE x.created_at >= to_timestamp($restored_at)")
note "each of the $nlost lost pairs counted again under a lease made after the restore: $again"
[ "$again" = "$nlost" ] || why+=("of the $nlost lost pairs, $again were counted under leases made after the restore (the others: resent?)")

if [ "${#why[@]}" -gt 0 ]; then
    for w in "${why[@]}"; do note "FAILED: $w"; done
    exit 1
fi
note "PASS: run $RUN finished at its cap of $PAIRS pairs, $((2 * PAIRS)) games each stored once, nothing counted twice; backup $(du -sh "$W/bk" | cut -f1)"
