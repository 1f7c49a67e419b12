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

# xqf-tune's commands as its --help lists them (a new command, a new run
# kind's included, is checked without a line here).
tune_commands=$("$bin/xqf-tune" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print "xqf-tune " $1 } on && /^$/ { exit }')
if [ "$(wc -l <<<"$tune_commands")" -lt 20 ]; then
    echo "xqf-tune --help lists too few commands: $tune_commands"
    exit 1
fi

bad=0
checked=0
programs=("xqf-coordinator" "xqf-worker" "xqf-keys" "xqf-match" "xqf-match makebook" "xqf-match blunders"
          "xqf-match tactics" "xqf-match tree" "xqf-web")
while IFS= read -r c; do programs+=("$c"); done <<<"$tune_commands"
for p in "${programs[@]}"; do
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
