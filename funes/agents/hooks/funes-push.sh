#!/usr/bin/env bash
# funes-push.sh AGENT [--funes PATH] --memory OWNER/NAME — the session-boundary publish hook.
#
# Installed by `funes add <agent> --memory OWNER/NAME` on the agent's session start/end events.
# The foreground drains the hook payload, starts a detached worker and exits 0 at once (no
# Python, no output). The worker runs `funes push <memory> --yes` and logs to
# $FUNES_HOME/logs/hooks.log:
#   <ISO time> <agent> <event> -: push: start <memory> | ok (<summary>) | WARN — secrets held back; … |
#                                  FAILED (exit N) | skipped (…)
# A failure is logged, never surfaced; the next session boundary tries again (push is
# append-only and sends only what the dataset lacks). Installed with funes-hook-common.sh beside
# it. See hooks/README.md.
set -u
# Logs and markers are the user's alone, whatever umask the agent runs hooks with.
umask 077
# What this script shares with funes-index.sh; without it the hook does nothing (`funes doctor`
# says so) rather than fail the agent.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
. "$here/funes-hook-common.sh" 2>/dev/null || { cat >/dev/null 2>&1; exit 0; }

if [ "${1:-}" != "--worker" ]; then
	event=$(head -c 65536 2>/dev/null | LC_ALL=C sed -n 's/.*"hook_event_name"[[:space:]]*:[[:space:]]*"\([A-Za-z0-9_.:-]*\)".*/\1/p' 2>/dev/null | head -n 1)
	cat >/dev/null 2>&1
	detach_worker "${event:--}" "$@"
	exit 0
fi

# ---------------------------------------------------------------------------- worker
shift
event=${1:--}
shift
agent=${1:-claude}
[ $# -gt 0 ] && shift
worker_args "$@"
idle_io
[ -z "$memory" ] && memory=$bare # the reference's `funes-push.sh OWNER/NAME`
close_inherited
funes_logdir
open_log || exit 0

log() {
	printf '%s %s %s -: push: %s\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" "$agent" "$event" "$*" >>"$logfile"
}

if [ -z "$memory" ]; then
	log "skipped (no memory bound to this hook)"
	exit 0
fi

find_funes || exit 0

# One push per memory at a time: a session's end and the next one's start often coincide.
running="$logdir/.pushing.$(printf '%s' "$memory" | cksum | cut -d' ' -f1)"
if [ -n "$(find "$running" -mmin +30 2>/dev/null)" ]; then
	rm -f "$running"
fi
if ! (set -C; echo $$ >"$running") 2>/dev/null; then
	log "skipped (a push to $memory is already running)"
	exit 0
fi
trap 'rm -f "$running"' EXIT

out=$(mktemp "${TMPDIR:-/tmp}/funes-push-out.XXXXXX" 2>/dev/null) || out=/dev/null
log "start $memory"
"$funes_bin" push "$memory" --yes >"$out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	summary=$(grep -v '^funes: ' "$out" 2>/dev/null | head -n 1)
	held=$(grep '^⚠ held back' "$out" 2>/dev/null | head -n 1)
	if [ -n "$held" ]; then
		log "WARN — secrets held back; ${summary:+$summary; }${held#⚠ }"
	else
		log "ok${summary:+ ($summary)}"
	fi
elif [ "$rc" -eq 2 ]; then
	log "WARN — secrets held back; $(tail -n 1 "$out" 2>/dev/null | sed 's/^funes: //')"
else
	# One append with funes' last lines under it: a reader that sees the FAILED line sees them.
	detail=$(tail -n 20 "$out" 2>/dev/null | sed 's/^/    /')
	log "FAILED (exit $rc)${detail:+
$detail}"
fi
[ "$out" = /dev/null ] || rm -f "$out"
exit 0
