#!/bin/sh
# A coding CLI that prints far more than the cap.
i=0
while [ $i -lt 2000 ]; do
  echo "line $i of chatter from the coding CLI, padded to be long enough to matter"
  i=$((i+1))
done
