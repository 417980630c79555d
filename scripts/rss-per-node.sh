#!/usr/bin/env bash
# rss-per-node.sh: per-node memory of a real cluster of `shufflenode serve` processes.
#
# Starts NODES serve processes on 127.0.0.1 with --memory-limit LIMIT, runs
# `shufflenode demo --cluster` against them from another process, and prints each node's
# RSS when idle (after joining), its peak (VmHWM), its peak anonymous and file-backed RSS
# (sampled every ~0.2 s), RssAnon/RssFile at the end (from /proc/PID/status) and the CPU
# seconds it used. Then it stops the nodes and removes its temporary directory. Linux only.
#
# RssAnon is the process's own memory (Go heap, stacks, runtime). RssFile is mapped files:
# the binary's text (~45 MB, shared by every process running it) and badger's memory-mapped
# value log, i.e. the bytes the node spilled (page cache the kernel can reclaim).
#
# Usage: scripts/rss-per-node.sh [-m LIMIT] [-n NODES] [-b BINARY] [-p PPROF_DIR] [-- DEMO_ARGS...]
#   -m LIMIT      --memory-limit of every node (default 62.5MiB: 1/8 of the demo's 500 MiB)
#   -n NODES      number of serve processes (default 4)
#   -b BINARY     shufflenode binary (default: go build ./cmd/shufflenode into the temp dir)
#   -p PPROF_DIR  also save node 1's heap profile (/debug/pprof/heap) every 2 s into PPROF_DIR
#   DEMO_ARGS     extra demo flags (default: --data 500MiB --tasks 1000 --partitions 1000)
set -euo pipefail

limit=62.5MiB nodes=4 bin="" pprof_dir=""
while getopts "m:n:b:p:h" opt; do
	case $opt in
	m) limit=$OPTARG ;;
	n) nodes=$OPTARG ;;
	b) bin=$OPTARG ;;
	p) pprof_dir=$OPTARG ;;
	*) sed -n '2,19p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
demo_args=("$@")
[[ ${#demo_args[@]} -gt 0 ]] || demo_args=(--data 500MiB --tasks 1000 --partitions 1000)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rss-per-node.XXXXXX")
pids=() sampler=""

cleanup() {
	[[ -n $sampler ]] && kill "$sampler" 2>/dev/null || true
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$(dirname "$0")/cluster.sh"
build_bin

# field prints a /proc/PID/status field in MB (10^6 bytes), or - if the process is gone.
field() {
	awk -v f="$2:" '$1 == f { printf "%.0f", $2 * 1024 / 1e6; found = 1 } END { if (!found) printf "-" }' \
		"/proc/$1/status" 2>/dev/null || printf -- "-"
}

# cpu prints the CPU seconds (user + system) process $1 has used, or - if it is gone.
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.1f", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || printf -- "-"
}

pprof=()
[[ -n $pprof_dir ]] && pprof=(--pprof)
if ! start_cluster "$nodes" --listen /ip4/127.0.0.1/tcp/0 --memory-limit "$limit" "${pprof[@]}"; then
	echo "rss-per-node: the $nodes nodes did not form a cluster; logs:" >&2
	tail -n 5 "$tmp"/n*.log >&2
	exit 1
fi
sleep 1
idle=()
for pid in "${pids[@]}"; do idle+=("$(field "$pid" VmRSS)"); done

# sample records each node's highest RssAnon and RssFile (VmHWM is only their peak sum).
sample() {
	local n=0 pid kind v
	declare -A peak
	while :; do
		for pid in "${pids[@]}"; do
			for kind in RssAnon RssFile; do
				v=$(field "$pid" $kind)
				[[ $v == - ]] && continue
				((v > ${peak[$kind$pid]:-0})) && peak[$kind$pid]=$v
				echo "${peak[$kind$pid]}" >"$tmp/$kind.$pid"
			done
		done
		if [[ -n $pprof_dir && $((n % 10)) -eq 0 ]]; then
			curl -s -o "$pprof_dir/heap-$(printf %03d $((n / 10))).pb.gz" "http://${admins[0]}/debug/pprof/heap" || true
		fi
		n=$((n + 1))
		sleep 0.2
	done
}
[[ -n $pprof_dir ]] && mkdir -p "$pprof_dir"
sample &
sampler=$!

echo "rss-per-node: $nodes nodes, --memory-limit $limit, demo ${demo_args[*]}"
status=0
TIMEFORMAT='demo process %R s wall, %U s user, %S s system'
{ time "$bin" demo --cluster "${apis[0]}" --nodes "$nodes" --log-level warn "${demo_args[@]}" \
	>"$tmp/demo.out" 2>"$tmp/demo.log" || status=$?; } 2>"$tmp/demo.time"
grep -E '^(verified|rows|bytes|tasks|shuffle|read|total|peak)' "$tmp/demo.out" || true
cat "$tmp/demo.time"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=""
if [[ $status -ne 0 ]]; then
	echo "rss-per-node: demo failed (exit $status):" >&2
	tail -n 5 "$tmp/demo.log" >&2
fi

printf '%-5s %8s %8s %8s %10s %10s %8s %8s %6s\n' node pid "idle RSS" VmHWM "peak anon" "peak file" \
	RssAnon RssFile "CPU s"
for i in "${!pids[@]}"; do
	pid=${pids[$i]}
	printf '%-5s %8s %5s MB %5s MB %7s MB %7s MB %5s MB %5s MB %6s\n' "n$((i + 1))" "$pid" "${idle[$i]}" \
		"$(field "$pid" VmHWM)" "$(cat "$tmp/RssAnon.$pid" 2>/dev/null || echo -)" \
		"$(cat "$tmp/RssFile.$pid" 2>/dev/null || echo -)" \
		"$(field "$pid" RssAnon)" "$(field "$pid" RssFile)" "$(cpu "$pid")"
done
exit "$status"
