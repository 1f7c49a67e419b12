#!/usr/bin/env bash
# check_usage.sh BIN GUIDES - fails when a program's usage (the "Usage:"
# lines of its --help, continuation lines joined) is not written the same
# way in a code block of its guide, GUIDES/PROGRAM.md (docs/programs/): the
# guides' usage blocks are the programs' own.
set -u
bin=$1 guides=$2

# Reads usage text on stdin: one command per line, continuation lines
# joined, runs of blanks folded.
commands() {
    awk '
        function flush() { if (cmd != "") { gsub(/[ \t]+/, " ", cmd); sub(/ $/, "", cmd); print cmd }; cmd = "" }
        { line = $0; sub(/^Usage: /, "", line); sub(/^[ \t]+/, "", line) }
        line ~ /^xqf-/ { flush(); cmd = line; next }
        cmd != "" && $0 ~ /^[ \t]/ && line ~ /^[[(-]/ { cmd = cmd " " line; next }
        { flush() }
        END { flush() }'
}

# The usage section of a --help: from "Usage:" to the first line that is
# neither a usage line nor indented.
usage_of() {
    "$bin/$1" ${2:+"$2"} --help | awk '/^Usage:/ { on = 1 } on && !/^Usage:/ && !/^[ \t]/ { exit } on'
}

# The commands written in the code blocks of a guide (nothing when it is missing).
guide_commands() {
    [ -f "$1" ] && awk '/^```/ { inside = !inside; next } inside' "$1" | commands
}

bad=0
checked=0
for p in "xqf-coordinator" "xqf-worker" "xqf-keys" "xqf-match" "xqf-match makebook" "xqf-match blunders" "xqf-match tactics" "xqf-match tree" "xqf-tune stats" \
         "xqf-tune spsa" "xqf-tune sprt" "xqf-tune list" "xqf-tune show" "xqf-tune stop" \
         "xqf-tune export" "xqf-tune report" "xqf-tune build" "xqf-tune texel" "xqf-tune nnue" "xqf-tune user" "xqf-web" \
         "xqf-tune data" "xqf-tune games" "xqf-tune modify" "xqf-tune chain" \
         "xqf-tune pgn" "xqf-tune purge" "xqf-tune net" "xqf-tune engine" "xqf-tune gauntlet"; do
    guide=$guides/${p%% *}.md
    written=$(guide_commands "$guide")
    # shellcheck disable=SC2086
    while IFS= read -r c; do
        checked=$((checked + 1))
        if ! grep -qxF -- "$c" <<<"$written"; then
            echo "$guide lacks the usage line of '$p --help': $c"
            bad=1
        fi
    done < <(usage_of $p | commands)
done
[ $bad -eq 0 ] && echo "usage: $checked usage lines of --help are the guides' in $guides"
exit $bad
