#!/bin/sh
# A coding CLI that reads its prompt on standard input.
set -e
cat > "$1/stdin.txt"
