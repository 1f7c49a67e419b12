#!/usr/bin/env bash
# check_includes.sh ROOT - fails (status 1, one line per offence) when a file
# includes a header against the project's dependency arrows (docs/architecture.md):
#
#   engine      -> nothing of the project
#   plumb       -> nothing of the project           (schemas/plumb/)
#   schemas     -> plumb                            (codec, migrations, key files)
#   tuner       -> the engine's parameter table     (statistics, SPSA, report)
#   worker      -> engine, schemas, tuner, plumb
#   coordinator -> schemas, tuner, plumb, the engine's parameter table
#   tuner/cli   -> anything but tests               (xqf-tune: nothing includes it)
#   web         -> anything but tests               (xqf-web: nothing includes it)
#   tests       -> anything
#
# Project headers are told apart by folder (their names are unique in the
# tree, which is checked too).  Two of the store's headers have one circle of
# readers: store_internal.h (its core's registry and hooks into its
# connection) only the store's own files (store.c, store_<domain>.c),
# store_test.h (what tests ask of it) only the tests and the store's files.
# Libraries: only the codec includes msgpack.h, only the store (store.c,
# store_<domain>.c and store_internal.h) libpq-fe.h, only the transports zmq.h (and their shared
# monitor reader schemas/plumb/zmq_monitor.c, and the tests' fake
# workers and tools), only plumb's SHA-256 and passwords and the key files
# sodium.h, only the web server's HTTP module microhttpd.h.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

node() {
    case $1 in
        engine/*) echo engine ;;
        schemas/plumb/*) echo plumb ;;
        schemas/*) echo schemas ;;
        tuner/cli/*) echo cli ;;
        tuner/*) echo tuner ;;
        worker/*) echo worker ;;
        coordinator/*) echo coordinator ;;
        tests/*) echo tests ;;
        web/*) echo web ;;
        *) echo other ;;
    esac
}

# allowed FROM TO HEADER: whether a file of FROM may include HEADER of TO.
allowed() {
    [ "$1" = "$2" ] && return 0
    case "$1:$2" in
        schemas:plumb) return 0 ;;
        tuner:engine | coordinator:engine) [ "$3" = params.h ] || [ "$3" = params.def ] ;;
        worker:engine | worker:schemas | worker:tuner | worker:plumb) return 0 ;;
        coordinator:schemas | coordinator:tuner | coordinator:plumb) return 0 ;;
        cli:tests | web:tests) return 1 ;;
        cli:* | web:* | tests:*) return 0 ;;
        *) return 1 ;;
    esac
}

# restricted HEADER FILE: whether FILE may include the project header HEADER, whatever the arrows say.
restricted_ok() {
    case $1 in
        store_internal.h) case $2 in coordinator/store.c | coordinator/store_*.c) ;; *) false ;; esac ;;
        store_test.h) case $2 in coordinator/store.c | coordinator/store_*.c | tests/*) ;; *) false ;; esac ;;
        *) true ;;
    esac
}

# library HEADER FILE: whether FILE may include the library header HEADER.
library_ok() {
    case $1 in
        msgpack.h) [ "$2" = schemas/wire/codec.c ] ;;
        libpq-fe.h) case $2 in coordinator/store.c | coordinator/store_*.c | coordinator/store_internal.h) ;; *) false ;; esac ;;
        zmq.h) case $2 in coordinator/transport.c | coordinator/zap.c | worker/daemon/worker_transport.c | schemas/plumb/zmq_monitor.c | tests/*) ;; *) false ;; esac ;;
        sodium.h) case $2 in schemas/plumb/sha256.c | schemas/plumb/password.c | schemas/plumb/keys.c) ;; *) false ;; esac ;;
        microhttpd.h) [ "$2" = web/http.c ] ;;
        *) true ;;
    esac
}

mapfile -t files < <(find engine worker coordinator tuner schemas tests web -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
declare -A home
bad=0
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
[ $bad -eq 0 ] && echo "includes: ${#files[@]} files follow the dependency arrows"
exit $bad
