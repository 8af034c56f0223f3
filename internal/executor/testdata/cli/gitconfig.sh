#!/bin/sh
# A coding CLI that rewires the clone's git configuration and hooks so that the next git
# command run in the clone would run a program of its choosing, then leaves a change.
set -e
git config core.fsmonitor "touch $1/pwned-fsmonitor"
git config core.hooksPath .git/evil-hooks
mkdir -p .git/evil-hooks .git/hooks
for h in pre-commit post-commit post-checkout reference-transaction; do
  printf '#!/bin/sh\ntouch %s/pwned-%s\n' "$1" "$h" > ".git/hooks/$h"
  cp ".git/hooks/$h" ".git/evil-hooks/$h"
  chmod +x ".git/hooks/$h" ".git/evil-hooks/$h"
done
git config include.path "$1/evil.gitconfig" || true
printf 'ok\n' > fine.txt
