#!/bin/sh
# A coding CLI that records who it runs as and what it can reach, then makes a change.
dump="$1"; prompt="$2"; secret="$3"; remote="$4"
id -u > "$dump/uid.txt"
cat "$secret" > /dev/null 2>&1 && echo "read the key" > "$dump/secret-read.txt"
touch "$remote/objects/planted" 2>/dev/null && echo "wrote into the remote" > "$dump/remote-written.txt"
cat "$prompt" > /dev/null && echo ok > "$dump/prompt-read.txt"
touch "$HOME/.cli-state" && touch "$TMPDIR/scratch" && echo ok > "$dump/home.txt"
printf 'as another user\n' > index.html
echo "changed index.html"
