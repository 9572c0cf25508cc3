#!/usr/bin/env bash
# The pytest part of `make test`, in two phases:
#   1. the files marked `alone` (their claims need a quiet machine), in one
#      process with nothing beside them;
#   2. every other file on WORKERS pytest-xdist workers (0: one process),
#      one file per worker at a time (module fixtures are made once).
# Running the quiet files first, rather than among the others, spares the
# other workers from idling while a quiet file waits for them to drain.
# Exit: 0 when both phases pass; a phase that selects no test (pytest's 5,
# e.g. under PYTEST_ADDOPTS=-k ...) passes unless the other selects none too.
set -u
cd "$(dirname "$0")/.."
workers=${1:-3}
bin=${VENV:-.venv}/bin
status=0
empty=0

phase() {
  "$bin/pytest" -q "$@"
  local rc=$?
  if [ "$rc" -eq 5 ]; then
    empty=$((empty + 1))
  elif [ "$rc" -ne 0 ]; then
    status=$rc
  fi
}

phase -m alone
if [ "$workers" = 0 ]; then
  phase -m 'not alone'
else
  phase -m 'not alone' -n "$workers" --dist loadfile
fi
if [ "$status" -eq 0 ] && [ "$empty" -eq 2 ]; then
  status=5
fi
exit "$status"
