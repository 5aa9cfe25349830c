#!/bin/sh
# cli_expect.sh EXPECTED_EXIT COMMAND... — runs COMMAND, prints its output
# and "exit=N", and fails unless N is EXPECTED_EXIT.  Tests that also match
# the output put "exit=N" into their PASS_REGULAR_EXPRESSION.
want=$1
shift
"$@" 2>&1
rc=$?
echo "exit=$rc"
[ "$rc" -eq "$want" ]
