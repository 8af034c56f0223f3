#!/bin/sh
# A coding CLI that tries to smuggle a file from outside the clone into the change.
set -e
ln -s /etc/passwd leak
printf 'ok\n' > fine.txt
