# Sourced by .ci/run, bin/test and images/build.sh: where a run's minutes went. Each phase appends
# "NAME<TAB>START<TAB>END<TAB>NOTE" (epoch seconds) to the file $KOMPI_PHASES names (nothing when unset);
# kompi_engine/build/phases.py writes the engine's rows. phase_table prints them in the order they started.
# shellcheck shell=bash

phase_record() {  # NAME START END [NOTE]
  [ -n "${KOMPI_PHASES:-}" ] || return 0
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$KOMPI_PHASES"
}

# NAME COMMAND...: run COMMAND as phase NAME; returns its status, which the row notes. COMMAND runs where
# errexit is off (bash ignores set -e on the left of ||), so give it programs, never shell functions.
timed() {
  local name=$1 start status=0
  shift
  start=$(date +%s)
  "$@" || status=$?
  phase_record "$name" "$start" "$(date +%s)" "$([ "$status" -eq 0 ] && echo ok || echo "exit $status")"
  return "$status"
}

phase_table() {  # ORIGIN (epoch seconds): the table, with each start counted from ORIGIN
  [ -n "${KOMPI_PHASES:-}" ] && [ -s "$KOMPI_PHASES" ] || return 0
  local now
  now=$(date +%s)
  echo "Where the minutes went (start and length in min:s; phases side by side overlap):"
  sort -t $'\t' -k2,2n -s "$KOMPI_PHASES" | awk -F '\t' -v origin="$1" -v now="$now" '
    function clock(s) { return sprintf("%d:%02d", int(s / 60), s % 60) }
    BEGIN { printf "  %-34s %7s %7s  %s\n", "phase", "start", "length", "note" }
    { printf "  %-34s %7s %7s  %s\n", $1, clock($2 - origin), clock($3 - $2), $4 }
    END { printf "  %-34s %7s %7s\n", "all", "0:00", clock(now - origin) }'
}
