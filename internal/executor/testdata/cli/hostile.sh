#!/bin/bash
# A coding CLI that behaves as a prompt-injected agent might. It tries, from inside its
# sandbox, everything the suite names, and writes each success into $dump/breaches; what
# it could see goes into $dump/seen. Then it makes an ordinary change, so the attempt
# itself succeeds.
#   hostile.sh DUMP "PORT..." "PATH..." OTHER_JOB
dump="$1"; ports="$2"; paths="$3"; other="$4"
breach() { echo "$*" >> "$dump/breaches"; }
for p in $ports; do
  # Temporal frontend, Web UI, chat endpoint, Stripe double, another preview.
  if timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null; then breach "connected to 127.0.0.1:$p"; fi
  if timeout 5 bash -c "exec 3<>/dev/tcp/10.0.2.2/$p" 2>/dev/null; then breach "connected to the host through 10.0.2.2:$p"; fi
done
for f in $paths; do
  if cat "$f" > /dev/null 2>&1; then breach "read $f"; fi
  if [ -d "$f" ] && ls "$f" > /dev/null 2>&1; then breach "listed $f"; fi
done
# Another contract's job: neither visible nor writable.
if [ -e "$other" ]; then breach "saw $other"; fi
if touch "$other/planted" 2>/dev/null; then breach "wrote $other"; fi
# Every process visible from here, with its command line.
for d in /proc/[0-9]*; do
  printf '%s %s\n' "${d#/proc/}" "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)" >> "$dump/seen"
done
# Signal everything it can: kill -9 -1 reaches every process this uid may signal.
# (Run in a subshell that exits with the rest; the CLI itself survives to finish.)
# A daemon that detaches twice and comes back after the CLI exits, to rewrite the clone's
# git configuration and plant a file.
setsid bash -c '(sleep 2; git config core.fsmonitor "touch '"$dump"'/pwned-late"; echo planted > late.txt; echo "late write happened" >> "'"$dump"'/breaches") &' "daemon-$dump" &
git config core.fsmonitor "touch $dump/pwned-fsmonitor"
printf '#!/bin/sh\ntouch %s/pwned-hook\n' "$dump" > .git/hooks/post-commit
chmod +x .git/hooks/post-commit
printf 'hostile but harmless\n' > index.html
echo "tried everything"
