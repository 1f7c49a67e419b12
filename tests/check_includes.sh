#!/usr/bin/env bash
# check_includes.sh ROOT - fails (status 1, one line per offence) when a file
# includes a header against the project's dependency arrows (docs/architecture.md),
# or when files include each other in a circle.  The folders are floors; a
# folder may include its own headers and those of the floors it names:
#
#   engine            -> nothing of the project
#   plumbing          -> nothing of the project     (logging, sandbox, passwords, key files, socket monitor)
#   schemas/wire      -> plumbing                   (the codec, messages.def)
#   schemas/formats   -> wire, plumbing             (engine records, games, parameter sets, run kinds)
#   schemas/sql       -> plumbing                   (migrations.h)
#   stats             -> the engine's parameter table (statistics, SPRT, SPSA, the fit)
#   report            -> stats, the engine's parameter table (the run report's HTML)
#   worker/game       -> engine, schemas, stats, plumbing  (the game library)
#   worker/match      -> game and what game may     (xqf-match)
#   worker/daemon     -> game and what game may     (xqf-worker)
#   store             -> schemas, stats, plumbing   (the run database: libpq)
#   coordinator       -> store, schemas, stats, report, plumbing, the engine's parameter table
#   service           -> stats, report, game, store, schemas, plumbing, the engine's parameter table
#   tuner/cli         -> anything but web and tests (xqf-tune: nothing includes it); of the
#                        engine, the parameter table and what its commands run in-process:
#                        eval.h, movegen.h, see.h (texel), bench.h, board.h, fen.h (build,
#                        data), nnue.h (net), never the search
#   web/request       -> report, stats, schemas, plumbing (routes.def, request parsing, buffers)
#   web/pages         -> web/request and what web may, but not web's own files (the pages)
#   web               -> anything but tuner/cli and tests (xqf-web: nothing includes it); of
#                        the engine, the parameter table and the net's reader: nnue.h
#                        (web_nets.c checks an uploaded net as the engine loads it), never
#                        the search
#   tests             -> anything
#
# So plumbing < schemas < store < service < tuner/cli, statistics < report <
# service, the game library < match and the daemon (neither includes the
# other), web/request < web/pages < web, and the web uses the service, never
# the CLI's headers.  No folder includes a folder above it: the coordinator
# and the worker reach the statistics and the report as libraries of their
# own, not through tuner/.
#
# Circles: a file and its header are one unit (foo.c, foo.h); unit A -> unit B
# when a file of A includes B's header.  A circle of units (A's file includes
# B's header and B's file A's, directly or through a chain) fails, named
# along its path; found by a depth-first search with three colours (Cormen et
# al., Introduction to Algorithms, 22.3: a grey unit met again is a back edge).
#
# check_includes.sh --self-test: runs this check on a small tree of its own
# with back arrows (stats -> report, web/request -> web/pages, xqf-tune ->
# the engine's search) and one circle, and fails unless all are reported.
#
# Project headers are told apart by folder (their names are unique in the
# tree, which is checked too).  Two of the store's headers have one circle of
# readers: store_internal.h (its core's registry and hooks into its
# connection) only the store's own files (store.c, store_<domain>.c),
# store_test.h (what tests ask of it) only the tests and the store's files.
# Libraries: only the codec includes msgpack.h, only the store (store.c,
# store_<domain>.c and store_internal.h) libpq-fe.h, only the transports zmq.h (and their shared
# monitor reader plumbing/zmq_monitor.c, and the tests' fake
# workers and tools), only plumbing's SHA-256 and passwords and the key files
# sodium.h, only the HTTP servers microhttpd.h (the web's http.c, the
# coordinator's /metrics in metrics.c).
set -u
if [ "${1:-}" = --self-test ]; then
    t=$(mktemp -d) || exit 2
    trap 'rm -rf "$t"' EXIT
    mkdir -p "$t/stats" "$t/report" "$t/worker/game" "$t/worker/match" \
        "$t/engine" "$t/coordinator" "$t/schemas" "$t/tests" "$t/web/request" "$t/web/pages"
    printf '#include "html.h"\n' >"$t/stats/stats.h"                # stats -> report: a back arrow
    printf '#include "stats.h"\n' >"$t/report/html.h"
    printf '#include "pages.h"\n' >"$t/web/request/request.h"       # web/request -> web/pages: a back arrow
    printf '#include "request.h"\n' >"$t/web/pages/pages.h"
    mkdir -p "$t/tuner/cli"
    : >"$t/engine/search.h"; : >"$t/engine/eval.h"
    printf '#include "eval.h"\n#include "search.h"\n' >"$t/tuner/cli/texel.c"   # eval.h allowed, search.h not
    printf '#include "pgn.h"\n' >"$t/worker/game/book.c"            # book -> pgn -> tactics -> book
    printf '#include "tactics.h"\n' >"$t/worker/game/pgn.c"
    printf '#include "book.h"\n' >"$t/worker/game/tactics.c"
    : >"$t/worker/game/book.h"; : >"$t/worker/game/pgn.h"; : >"$t/worker/game/tactics.h"
    printf '#include "book.h"\n' >"$t/worker/match/match_main.c"   # match -> game: allowed
    out=$(bash "$0" "$t")
    rc=$?
    printf '%s\n' "$out"
    if [ $rc -eq 1 ] && grep -q 'stats/stats.h:1: includes report/html.h (stats -> report' <<<"$out" &&
       grep -q 'web/request/request.h:1: includes web/pages/pages.h (request -> pages' <<<"$out" &&
       grep -q 'tuner/cli/texel.c:2: includes engine/search.h (cli -> engine' <<<"$out" &&
       ! grep -q 'texel.c:1:' <<<"$out" &&
       grep -q 'circle: worker/game/book -> worker/game/pgn -> worker/game/tactics -> worker/game/book' <<<"$out" &&
       ! grep -q match_main <<<"$out"; then
        echo "includes self-test: the back arrows and the circle are found"
        exit 0
    fi
    echo "includes self-test: FAILED (status $rc)"
    exit 1
fi
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

node() {
    case $1 in
        engine/*) echo engine ;;
        plumbing/*) echo plumbing ;;
        schemas/wire/*) echo wire ;;
        schemas/formats/*) echo formats ;;
        schemas/sql/*) echo sql ;;
        stats/*) echo stats ;;
        report/*) echo report ;;
        store/*) echo store ;;
        service/*) echo service ;;
        tuner/cli/*) echo cli ;;
        worker/game/*) echo game ;;
        worker/match/*) echo match ;;
        worker/daemon/*) echo daemon ;;
        coordinator/*) echo coordinator ;;
        tests/*) echo tests ;;
        web/request/*) echo request ;;
        web/pages/*) echo pages ;;
        web/*) echo web ;;
        *) echo other ;;
    esac
}

# allowed FROM TO HEADER: whether a file of FROM may include HEADER of TO.
allowed() {
    [ "$1" = "$2" ] && return 0
    case "$1:$2" in
        wire:plumbing | formats:wire | formats:plumbing | sql:plumbing) return 0 ;;
        stats:engine | report:engine | coordinator:engine | service:engine | pages:engine)
            [ "$3" = params.h ] || [ "$3" = params.def ] ;;
        web:engine) case $3 in params.h | params.def | nnue.h) ;; *) false ;; esac ;;
        cli:engine) case $3 in params.h | params.def | eval.h | movegen.h | see.h | bench.h | board.h | fen.h | nnue.h) ;; *) false ;; esac ;;
        report:stats) return 0 ;;
        game:engine | game:plumbing | game:wire | game:formats | game:stats) return 0 ;;
        match:game | match:engine | match:plumbing | match:wire | match:formats | match:stats) return 0 ;;
        daemon:game | daemon:engine | daemon:plumbing | daemon:wire | daemon:formats | daemon:stats) return 0 ;;
        store:plumbing | store:wire | store:formats | store:sql | store:stats) return 0 ;;
        coordinator:store | coordinator:plumbing | coordinator:wire | coordinator:formats | coordinator:sql) return 0 ;;
        coordinator:stats | coordinator:report) return 0 ;;
        service:stats | service:report | service:game | service:store) return 0 ;;
        service:plumbing | service:wire | service:formats) return 0 ;;
        request:report | request:stats | request:plumbing | request:wire | request:formats) return 0 ;;
        pages:web | pages:cli | pages:tests | cli:tests | cli:web | cli:request | cli:pages) return 1 ;;
        web:tests | web:cli) return 1 ;;
        pages:* | cli:* | web:* | tests:*) return 0 ;;
        *) return 1 ;;
    esac
}

# restricted HEADER FILE: whether FILE may include the project header HEADER, whatever the arrows say.
restricted_ok() {
    case $1 in
        store_internal.h) case $2 in store/store.c | store/store_*.c) ;; *) false ;; esac ;;
        store_test.h) case $2 in store/store.c | store/store_*.c | tests/*) ;; *) false ;; esac ;;
        *) true ;;
    esac
}

# library HEADER FILE: whether FILE may include the library header HEADER.
library_ok() {
    case $1 in
        msgpack.h) [ "$2" = schemas/wire/codec.c ] ;;
        libpq-fe.h) case $2 in store/store.c | store/store_*.c | store/store_internal.h) ;; *) false ;; esac ;;
        zmq.h) case $2 in coordinator/transport.c | coordinator/zap.c | worker/daemon/worker_transport.c | plumbing/zmq_monitor.c | tests/*) ;; *) false ;; esac ;;
        sodium.h) case $2 in plumbing/sha256.c | plumbing/password.c | plumbing/keys.c) ;; *) false ;; esac ;;
        microhttpd.h) case $2 in web/http.c | coordinator/metrics.c) ;; *) false ;; esac ;;
        *) true ;;
    esac
}

folders=()
for d in engine plumbing schemas stats report worker store service coordinator tuner tests web; do
    [ -d "$d" ] && folders+=("$d")
done
mapfile -t files < <(find "${folders[@]}" -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
declare -A home
bad=0
edges=
for f in "${files[@]}"; do
    b=${f##*/}
    case $b in *.h | *.def) ;; *) continue ;; esac
    if [ -n "${home[$b]:-}" ]; then
        echo "$f: header name also used by ${home[$b]} (names must be unique)"
        bad=1
    fi
    home[$b]=$f
done

for f in "${files[@]}"; do
    from=$(node "$f")
    while IFS= read -r line; do
        no=${line%%:*}
        text=${line#*:}
        if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
            h=${BASH_REMATCH[1]##*/}
            dest=${home[$h]:-}
            [ -n "$dest" ] || continue              # generated, or a system header quoted
            to=$(node "$dest")
            edges+="$f $dest"$'\n'
            if ! allowed "$from" "$to" "$h"; then
                echo "$f:$no: includes $dest ($from -> $to is against the arrows)"
                bad=1
            fi
            if ! restricted_ok "$h" "$f"; then
                echo "$f:$no: includes $dest (only its circle of readers may)"
                bad=1
            fi
        elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
            h=${BASH_REMATCH[1]}
            if ! library_ok "$h" "$f"; then
                echo "$f:$no: includes <$h> (only its owning module may)"
                bad=1
            fi
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$f")
done

# Circles of units: the file-level arrows (FILE HEADER) lifted to units, a
# header without a .c of its own (routes.def, store_internal.h, messages.def) read
# through as part of whoever includes it; then a depth-first search from
# every unit, grey while on the path.
circles=$( { printf '%s\n' "${files[@]}" | sed -n 's/\.c$//p' | sed 's/^/unit /'; printf '%s' "$edges" | sed 's/^/arrow /'; } | awk '
    $1 == "unit" { unit[$2] = 1; next }
    $1 == "arrow" { inc[$2] = inc[$2] " " $3; from[$2] = 1 }
    function unit_of(f,    stem) { stem = f; sub(/\.[^.\/]*$/, "", stem); return (stem in unit) ? stem : "" }
    # the units that file f reaches from unit u, through headers of no unit
    function reach(u, f,    n, i, hs, h, v) {
        n = split(inc[f], hs, " ")
        for (i = 1; i <= n; i++) {
            h = hs[i]
            if ((u SUBSEP h) in seen) continue
            seen[u, h] = 1
            v = unit_of(h)
            if (v == "") reach(u, h)
            else if (v != u && !((u SUBSEP v) in edge)) { edge[u, v] = 1; out[u] = out[u] " " v }
        }
    }
    function visit(u,    n, i, next_, vs, p, k) {
        colour[u] = 1; path[++depth] = u
        n = split(out[u], vs, " ")
        for (i = 1; i <= n; i++) {
            next_ = vs[i]
            if (colour[next_] == 1) {
                for (k = 1; path[k] != next_; k++) ;
                p = path[k]
                for (k++; k <= depth; k++) p = p " -> " path[k]
                print "circle: " p " -> " next_
            } else if (colour[next_] == 0)
                visit(next_)
        }
        depth--; colour[u] = 2
    }
    END {
        for (f in from) { u = unit_of(f); if (u != "") reach(u, f) }
        for (u in unit) if (colour[u] == 0) visit(u)
    }' | sort)
if [ -n "$circles" ]; then
    printf '%s\n' "$circles"
    bad=1
fi
[ $bad -eq 0 ] && echo "includes: ${#files[@]} files follow the dependency arrows, with no circle"
exit $bad
