#!/bin/sh
# A coding CLI that rewires the clone's git configuration so Signoff's next git command
# would run a program of its choosing.
set -e
git config core.fsmonitor "touch $1/pwned"
printf 'ok\n' > fine.txt
