#!/usr/bin/env bash
# funes-index.sh AGENT [--funes PATH] [--memory M] [--push HUB] — the per-turn / session-end
# index hook.
#
# The agent pipes its hook payload (JSON: transcript_path, session_id, hook_event_name, cwd) to
# stdin. The foreground saves it to a temp file, starts a detached worker and exits 0 at once:
# no Python, no output, so the agent never waits on funes and never reads anything from it.
# The worker runs `funes index <transcript_path> --yes [--memory M]` (the writer lock is taken by
# `funes index`) and logs one line per step to $FUNES_HOME/logs/hooks.log:
#   <ISO time> <agent> <event> <session>: start <target> | ok (<summary>) | FAILED (exit N) | …
# A failure is logged, never surfaced; the next turn catches up (indexing is idempotent).
# With --push (an agent with no session-end event, bound to a Hub memory), a worker that ran the
# index then publishes HUB through funes-push.sh beside this script, at most once every
# $FUNES_PUSH_MINUTES (15) minutes: not one Hub commit per turn.
# Installed by `funes add <agent>`, with funes-hook-common.sh beside it; see hooks/README.md.
set -u
# Logs and markers are the user's alone, whatever umask the agent runs hooks with.
umask 077
# What this script shares with funes-push.sh; without it the hook does nothing (`funes doctor`
# says so) rather than fail the agent.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
. "$here/funes-hook-common.sh" 2>/dev/null || { cat >/dev/null 2>&1; exit 0; }

if [ "${1:-}" != "--worker" ]; then
	# The payload waits in the memory's queue (a dotfile the drain ignores) until the worker has
	# queued its target: from the hook's return on, the queue shows the turn as pending, however
	# late the detached worker gets the CPU. No Python, only mkdir and cksum.
	memory=""
	prev=""
	for a in "$@"; do
		[ "$prev" = --memory ] && memory=$a
		prev=$a
	done
	funes_logdir
	queue="$logdir/.queue.$(printf '%s' "$memory" | cksum | cut -d' ' -f1)"
	payload=""
	(umask 077 && mkdir -p "$queue") 2>/dev/null &&
		payload=$(mktemp "$queue/.payload.XXXXXX" 2>/dev/null)
	[ -n "$payload" ] || payload=$(mktemp "${TMPDIR:-/tmp}/funes-hook.XXXXXX" 2>/dev/null) || payload=""
	if [ -n "$payload" ]; then
		cat >"$payload" 2>/dev/null
	else
		cat >/dev/null 2>&1
	fi
	detach_worker "$payload" "$@"
	exit 0
fi

# ---------------------------------------------------------------------------- worker
shift
payload=${1:-}
shift
# The payload leaves the queue however the worker ends (an early exit below included).
trap '[ -n "$payload" ] && rm -f "$payload" 2>/dev/null' EXIT
agent=${1:-claude}
[ $# -gt 0 ] && shift
worker_args "$@"
idle_io
close_inherited
funes_logdir
open_log || exit 0

# One JSON string field of the payload, unescaped (no jq, no Python: awk is everywhere).
json_field() {
	[ -n "$payload" ] && [ -s "$payload" ] || return 0
	LC_ALL=C awk -v key="$1" '
	function hex(h,   i, c, v) {
		v = 0
		for (i = 1; i <= length(h); i++) {
			c = index("0123456789abcdef", tolower(substr(h, i, 1)))
			if (c == 0) return -1
			v = v * 16 + c - 1
		}
		return v
	}
	function utf8(u) {
		if (u < 128) return sprintf("%c", u)
		if (u < 2048) return sprintf("%c%c", 192 + int(u / 64), 128 + u % 64)
		if (u < 65536) return sprintf("%c%c%c", 224 + int(u / 4096), 128 + int(u / 64) % 64, 128 + u % 64)
		return sprintf("%c%c%c%c", 240 + int(u / 262144), 128 + int(u / 4096) % 64, 128 + int(u / 64) % 64, 128 + u % 64)
	}
	{ s = s $0 "\n" }
	END {
		if (!match(s, "\"" key "\"[ \t\r\n]*:[ \t\r\n]*\"")) exit
		i = RSTART + RLENGTH; n = length(s); out = ""
		while (i <= n) {
			c = substr(s, i, 1)
			if (c == "\"") { printf "%s", out; exit }
			if (c == "\\") {
				e = substr(s, i + 1, 1); i += 2
				if (e == "n") out = out "\n"
				else if (e == "t") out = out "\t"
				else if (e == "r") out = out "\r"
				else if (e == "b") out = out "\b"
				else if (e == "f") out = out "\f"
				else if (e == "u") {
					u = hex(substr(s, i, 4)); i += 4
					if (u >= 55296 && u < 56320 && substr(s, i, 2) == "\\u") {
						lo = hex(substr(s, i + 2, 4))
						if (lo >= 56320 && lo < 57344) { u = 65536 + (u - 55296) * 1024 + lo - 56320; i += 6 }
					}
					if (u >= 0) out = out utf8(u)
				} else out = out e
				continue
			}
			out = out c; i++
		}
	}' "$payload" 2>/dev/null
}

is_json_object() {
	[ -n "$payload" ] && [ -s "$payload" ] || return 1
	LC_ALL=C awk '{ s = s $0 } END { gsub(/^[ \t\r\n]+|[ \t\r\n]+$/, "", s); exit !(s ~ /^\{.*\}$/) }' "$payload" 2>/dev/null
}

transcript=$(json_field transcript_path)
session=$(json_field session_id)
# Cursor names its chat, not a session
[ -n "$session" ] || session=$(json_field conversation_id)
event=$(json_field hook_event_name)
if is_json_object; then problem=""; else problem="payload is not a JSON object"; fi
session=$(printf '%s' "${session:--}" | tr -c 'A-Za-z0-9._:@+=-' '_')
event=$(printf '%s' "${event:--}" | tr -c 'A-Za-z0-9._:@+=-' '_')

log() {
	printf '%s %s %s %s: %s\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" "$agent" "$event" "$session" "$*" >>"$logfile"
}

# Log a step once for each hook whose target the current run indexes (`$runners`: one
# "<agent> <event> <session>" per line, from the queue), so a Codex hook whose transcript a
# Claude hook's worker picks up is logged as Codex's; without runners, as this hook's.
log_runners() {
	if [ -z "$runners" ]; then
		log "$@"
		return
	fi
	printf '%s\n' "$runners" | while IFS= read -r who; do
		[ -n "$who" ] && printf '%s %s: %s\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" "$who" "$*" >>"$logfile"
	done
}
runners=""

find_funes || exit 0

# An agent whose payload names no transcript (Hermes, OpenCode; Copilot CLI's SessionEnd) has
# the file that holds its transcripts indexed instead. `funes add` writes the cases below from
# each registered agent's hook_transcript (funes/agents/_registry.py).
if [ -z "$transcript" ]; then
	db=""
	case $agent in
	# agents: begin
	copilot) db="${COPILOT_HOME:-$HOME/.copilot}/session-state/$session/events.jsonl" ;;
	cursor) db="${CURSOR_CONFIG_DIR:-$HOME/.cursor}"/projects/*/agent-transcripts/"$session".jsonl ;;
	hermes) db="${HERMES_HOME:-$HOME/.hermes}/state.db" ;;
	opencode) db="${XDG_DATA_HOME:-$HOME/.local/share}/opencode/opencode.db" ;;
	# agents: end
	esac
	# A pattern (Cursor keeps a chat under a project folder its payload does not name): the
	# first file it matches. IFS is empty so a home with spaces stays one word.
	case $db in
	*'*'*)
		saved_ifs=$IFS
		IFS=''
		for f in $db; do
			[ -f "$f" ] && { db=$f; break; }
		done
		IFS=$saved_ifs
		;;
	esac
	[ -n "$db" ] && [ -f "$db" ] && transcript=$db
fi

if [ -n "$transcript" ] && [ -e "$transcript" ]; then
	kind=p target=$transcript
else
	why=${problem:-"no transcript_path in the payload"}
	[ -n "$transcript" ] && why="transcript_path $transcript does not exist"
	log "$why; indexing $agent's sessions instead"
	kind=h target=$agent
fi

# ---------------------------------------------------------------------------- coalescing
# A burst of hooks (one per turn, several agents at once) must cost one indexing process, not
# one Python start each. Every worker puts its target in the memory's queue, then takes the
# memory's shell lock without waiting: the worker that gets it indexes everything queued, in one
# `funes index` run, and looks again before it leaves; a worker that does not get it leaves its
# target to the holder and exits. No Python runs before the lock is held.
key=$(printf '%s' "$memory" | cksum | cut -d' ' -f1)
queue="$logdir/.queue.$key"
lockfile="$logdir/.index.$key.lock"
mkdir -p "$queue" 2>/dev/null || exit 0
# One entry per hook run (its pid in the name), so two runs for one transcript each keep their
# agent, event and session; the drain below gives `funes index` each target once.
entry="$queue/$kind.$(printf '%s' "$target" | cksum | cut -d' ' -f1).$$"
printf '%s\n%s %s %s\n' "$target" "$agent" "$event" "$session" >"$queue/.new.$$" 2>/dev/null &&
	mv -f "$queue/.new.$$" "$entry" 2>/dev/null
# Only now, with the target queued, does the payload leave the queue.
rm -f "$payload" 2>/dev/null

have_flock=""
command -v flock >/dev/null 2>&1 && have_flock=1
take_lock() {
	if [ -n "$have_flock" ]; then
		exec 8>>"$lockfile" || return 1
		flock -n 8 && return 0
		exec 8>&-
		return 1
	fi
	# No flock(1) (macOS): a directory made atomically, holding our pid; a holder that died
	# without removing it (kill -9) is detected and its lock taken over.
	if mkdir "$lockfile.d" 2>/dev/null; then
		echo $$ >"$lockfile.d/pid"
		return 0
	fi
	holder=$(cat "$lockfile.d/pid" 2>/dev/null)
	if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
		rm -rf "$lockfile.d" 2>/dev/null
		mkdir "$lockfile.d" 2>/dev/null || return 1
		echo $$ >"$lockfile.d/pid"
		return 0
	fi
	return 1
}
release_lock() {
	if [ -n "$have_flock" ]; then
		exec 8>&-
	else
		rm -rf "$lockfile.d" 2>/dev/null
	fi
}
queued() {
	for e in "$queue"/p.* "$queue"/h.*; do
		[ -e "$e" ] && return 0
	done
	return 1
}

out=$(mktemp "${TMPDIR:-/tmp}/funes-hook-out.XXXXXX" 2>/dev/null) || out=/dev/null

# Run `funes ARGS…` (as `index … --yes [--memory M]`), waiting out another funes writer (a
# `funes index` the user started, a scrub) rather than losing the turn until the next one.
run_index() {
	what=$1
	shift
	set -- index "$@" --yes
	[ -n "$memory" ] && set -- "$@" --memory "$memory"
	log_runners "start $what"
	tries=0
	while :; do
		"$funes_bin" "$@" >"$out" 2>&1 8>&-
		rc=$?
		[ "$rc" -eq 0 ] && break
		if [ "$tries" -lt "${FUNES_HOOK_RETRIES:-3}" ] && grep -q "another funes memory operation is in progress" "$out" 2>/dev/null; then
			tries=$((tries + 1))
			log_runners "busy: another funes memory operation is in progress; retrying in ${FUNES_HOOK_RETRY_SECONDS:-20}s ($tries/${FUNES_HOOK_RETRIES:-3})"
			sleep "${FUNES_HOOK_RETRY_SECONDS:-20}"
			continue
		fi
		break
	done
	if [ "$rc" -eq 0 ]; then
		summary=$(grep -v '^funes: ' "$out" 2>/dev/null | tail -n 1)
		log_runners "ok${summary:+ ($summary)}"
	else
		# One append per runner with funes' last lines under it: a reader that sees the FAILED
		# line sees them.
		detail=$(tail -n 20 "$out" 2>/dev/null | sed 's/^/    /')
		printf '%s\n' "${runners:-$agent $event $session}" | while IFS= read -r who; do
			[ -n "$who" ] || continue
			printf '%s %s: %s\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" "$who" "FAILED (exit $rc)${detail:+
$detail}" >>"$logfile"
		done
	fi
}

# Index everything queued, in as few runs as there are kinds of target: all transcript paths
# in one `funes index` (each path once, however many hooks queued it), then each agent whose
# root is swept. Each run is logged under every hook that queued one of its targets.
nl='
'
add_line() { # add_line LIST LINE: LIST with LINE appended unless it holds it already
	case "$nl$1$nl" in *"$nl$2$nl"*) printf '%s' "$1" ;; *) printf '%s' "${1:+$1$nl}$2" ;; esac
}
drain() {
	while queued; do
		set --
		paths=""
		paths_by=""
		sweeps=""
		for e in "$queue"/p.* "$queue"/h.*; do
			[ -e "$e" ] || continue
			t=$(sed -n 1p "$e" 2>/dev/null)
			who=$(sed -n 2p "$e" 2>/dev/null)
			rm -f "$e"
			[ -n "$t" ] || continue
			case ${e##*/} in
			p.*)
				[ -e "$t" ] || continue
				case "$nl$paths$nl" in *"$nl$t$nl"*) ;; *)
					paths=$(add_line "$paths" "$t")
					set -- "$@" "$t"
					;;
				esac
				paths_by=$(add_line "$paths_by" "$who")
				;;
			h.*) sweeps=$(add_line "$sweeps" "$t $who") ;;
			esac
		done
		runners=$paths_by
		[ $# -gt 0 ] && run_index "$*" "$@"
		harnesses=""
		for h in $(printf '%s\n' "$sweeps" | cut -d' ' -f1); do
			harnesses=$(add_line "$harnesses" "$h")
		done
		for h in $harnesses; do
			runners=$(printf '%s\n' "$sweeps" | awk -v h="$h" '$1 == h { sub(/^[^ ]* /, ""); print }')
			run_index "--harness $h" --harness "$h"
		done
		runners=""
	done
}

drained=""
while :; do
	take_lock || break
	# Let the rest of a burst land in the queue: one run then covers all of it.
	sleep "${FUNES_HOOK_SETTLE:-0.2}" 2>/dev/null
	drain
	drained=1
	release_lock
	# A target queued after the last look but before the release finds no holder: look again.
	queued || break
done
[ "$out" = /dev/null ] || rm -f "$out"

# The push after the index run (--push): only by the worker that ran it, so what it publishes
# holds this turn. funes-push.sh logs it and runs one push per memory at a time.
if [ -n "$push" ] && [ -n "$drained" ]; then
	stamp="$logdir/.pushed.$(printf '%s' "$push" | cksum | cut -d' ' -f1)"
	if [ -z "$(find "$stamp" -mmin "-${FUNES_PUSH_MINUTES:-15}" 2>/dev/null)" ]; then
		: >"$stamp"
		bash "$here/funes-push.sh" --worker "$event" "$agent" --funes "$funes_bin" --memory "$push"
	fi
fi
exit 0
