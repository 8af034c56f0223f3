#!/bin/sh
# A coding CLI that hangs, with a child in its process group.
dump="$1"
sleep 300 &
echo $! > "$dump/child.pid.tmp" && mv "$dump/child.pid.tmp" "$dump/child.pid"
echo $$ > "$dump/leader.pid.tmp" && mv "$dump/leader.pid.tmp" "$dump/leader.pid"
wait
