# funes-hook-common.sh — sourced by funes-index.sh and funes-push.sh, installed beside them by
# `funes add`: where the log lives, the detached start, the worker's arguments, descriptors and
# log rotation, and where funes is. Functions only; nothing runs on sourcing. See hooks/README.md.

# Where the logs and the memory's queue live: sets $logdir ($FUNES_HOME/logs, as funes resolves it).
funes_logdir() {
	if [ -n "${FUNES_HOME:-}" ]; then
		fh=$FUNES_HOME
		case $fh in "~/"*) fh="$HOME/${fh#"~/"}" ;; esac
	elif [ "$(uname -s 2>/dev/null)" = Darwin ]; then
		fh="$HOME/Library/Application Support/funes"
	else
		fh="${XDG_DATA_HOME:-$HOME/.local/share}/funes"
	fi
	logdir="$fh/logs"
}

# Start this script again as `--worker ARGS…`, detached: a new session (setsid) so the agent's
# process-group kill or hangup never reaches it; without setsid (macOS), job control gives it
# its own process group. Nothing of it reaches the agent's stdout or stderr. The worker runs at
# low priority (`nice -n 10`, where nice exists): an index run can embed for minutes, and the
# agent it serves must keep the CPU meanwhile.
detach_worker() {
	set -- bash "$0" --worker "$@"
	command -v nice >/dev/null 2>&1 && set -- nice -n 10 "$@"
	if command -v setsid >/dev/null 2>&1; then
		setsid "$@" </dev/null >/dev/null 2>&1 &
	else
		set -m
		nohup "$@" </dev/null >/dev/null 2>&1 &
	fi
}

# The worker's disk reads and writes in idle time only (`ionice -c3`, Linux); nothing where
# ionice is missing or refused.
idle_io() {
	command -v ionice >/dev/null 2>&1 && ionice -c3 -p $$ >/dev/null 2>&1
	return 0
}

# The worker's options: sets $funes_bin (--funes, else $FUNES_BIN), $memory (--memory), $push
# (--push) and $bare (the first other word).
worker_args() {
	funes_bin=${FUNES_BIN:-}
	memory=""
	push=""
	bare=""
	while [ $# -gt 0 ]; do
		case $1 in
		--funes) funes_bin=${2:-}; shift 2 || shift ;;
		--memory) memory=${2:-}; shift 2 || shift ;;
		--push) push=${2:-}; shift 2 || shift ;;
		*) [ -z "$bare" ] && bare=$1; shift ;;
		esac
	done
}

# Close every inherited descriptor but 0-2 (already /dev/null) and bash's own script fd (255),
# so nothing the agent passed down stays open while the worker runs.
close_inherited() {
	for fd in /dev/fd/*; do
		n=${fd##*/}
		case $n in
		0 | 1 | 2 | 255 | *[!0-9]*) ;;
		*) eval "exec $n>&-" 2>/dev/null ;;
		esac
	done
}

# Make $logdir and set $logfile (hooks.log), moved to hooks.log.1 past 1 MB; false if the
# folder cannot be made.
open_log() {
	logfile="$logdir/hooks.log"
	mkdir -p "$logdir" 2>/dev/null || return 1
	size=$(wc -c <"$logfile" 2>/dev/null || echo 0)
	if [ "${size// /}" -gt 1048576 ] 2>/dev/null; then
		mv -f "$logfile" "$logfile.1" 2>/dev/null
	fi
}

# $funes_bin if it runs, else funes on PATH or where installers put it; false (after logging,
# with the caller's `log`, how to fix it) when there is none.
find_funes() {
	[ -n "$funes_bin" ] && [ -x "$funes_bin" ] && return 0
	found=$(command -v funes 2>/dev/null)
	for d in "$HOME/.local/bin" /opt/homebrew/bin /usr/local/bin "$HOME/go/bin" /usr/bin /bin; do
		[ -n "$found" ] && break
		[ -x "$d/funes" ] && found="$d/funes"
	done
	if [ -z "$found" ]; then
		log "ABORT: funes not found (${funes_bin:-no --funes given}, nor on PATH); rerun \`funes add $agent\`"
		return 1
	fi
	funes_bin=$found
}
