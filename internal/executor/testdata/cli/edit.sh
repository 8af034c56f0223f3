#!/bin/sh
# A coding CLI that makes a change: edits one file, adds another.
set -e
sed 's#<h1>Watchlist</h1>#<h1>Watchlist</h1><section data-testid="watchlist-card">AAPL</section>#' index.html > index.html.new
mv index.html.new index.html
mkdir -p src
printf 'card\n' > src/card.txt
echo "edited index.html, added src/card.txt"
