#!/bin/sh
# A coding CLI that looks around and changes nothing: it records its environment, its
# prompt file and its working directory for the test, then exits 0.
set -e
dump="$1"; prompt="$2"
env > "$dump/env.txt"
cp "$prompt" "$dump/prompt.md"
pwd > "$dump/pwd.txt"
echo "looked around, changed nothing"
