#!/bin/sh
# A coding CLI that hangs, with a child in its process group and a daemon that leaves it
# (setsid, double fork). Each carries the dump path in its command line, so the test can
# look for survivors on the host by that mark.
dump="$1"
sh -c 'while :; do sleep 1; done' "child-$dump" &
setsid sh -c 'sh -c "while :; do sleep 1; done" "daemon-$0" &' "$dump" &
echo started > "$dump/started.tmp" && mv "$dump/started.tmp" "$dump/started"
wait
