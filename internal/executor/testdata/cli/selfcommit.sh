#!/bin/sh
# A coding CLI that commits on its own, under its own identity, and leaves one more
# uncommitted change. Signoff must commit the work tree it left, as Signoff, on the parent.
set -e
printf 'one\n' > one.txt
git add one.txt
git -c user.name=Bot -c user.email=bot@example.com commit -q -m "bot commit"
printf 'two\n' > two.txt
