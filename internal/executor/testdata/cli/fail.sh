#!/bin/sh
# A coding CLI that fails after touching a file.
printf 'half done\n' > partial.txt
echo "model quota exceeded" >&2
exit 3
