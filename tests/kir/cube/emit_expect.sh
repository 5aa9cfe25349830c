#!/bin/sh
# emit_expect.sh BEXTC FILE.bext — golden `bextc --emit=kir`: the IR text
# of every instantiation in FILE.bext must equal FILE.kir (regenerate one
# with `bextc --emit=kir FILE.bext > FILE.kir` and review the diff).
set -u
bextc=$1
src=$2
want=${src%.bext}.kir
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bextc" --emit=kir "$src" > "$out"
rc=$?
if [ $rc -ne 0 ]; then
  echo "bextc --emit=kir $src exited $rc"
  exit 1
fi
diff -u "$want" "$out"
