#!/usr/bin/env bash
# kill-one.sh: a real cluster of `shufflenode serve` processes loses one node mid-shuffle.
#
# Starts 4 serve processes on 127.0.0.1 (--profile local plus SERVE_FLAGS), runs `shufflenode
# demo --cluster` against them from another process, SIGKILLs node 2 AFTER seconds into the
# demo, and prints the demo's report (it verifies that every row arrived exactly once), when
# the kill happened and when each survivor declared node 2 lost. Then it stops the nodes and
# removes its temporary directory. Linux only; uses ports 7411-7414 and 7511-7514.
#
# Usage: scripts/kill-one.sh [-k AFTER] [-b BINARY] [-- SERVE_FLAGS...]
#   -k AFTER    seconds from the demo's start to the kill (default 1.0)
#   -b BINARY   shufflenode binary (default: go build ./cmd/shufflenode into the temp dir)
#   SERVE_FLAGS extra serve flags, e.g. --probe-interval 200ms --probe-timeout 100ms --suspicion-mult 2
set -euo pipefail

after=1.0 bin=""
while getopts "k:b:h" opt; do
	case $opt in
	k) after=$OPTARG ;;
	b) bin=$OPTARG ;;
	*) sed -n '2,13p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

if [ -z "$bin" ]; then
	bin=$dir/shufflenode
	go build -o "$bin" ./cmd/shufflenode
fi

for i in 1 2 3 4; do
	join=()
	[ "$i" -gt 1 ] && join=(--join 127.0.0.1:7411)
	"$bin" serve --name "n$i" --data-dir "$dir/d$i" --gossip "127.0.0.1:741$i" --api "127.0.0.1:751$i" \
		--admin "" --profile local --log-level warn "${join[@]}" "$@" >"$dir/n$i.log" 2>&1 &
	pids+=($!)
	sleep 0.3
done
sleep 2

victim=${pids[1]}
(
	sleep "$after"
	kill -9 "$victim"
	echo "killed n2 at $(date -u +%T.%3N)"
) &
"$bin" demo --cluster 127.0.0.1:7511 --log-level warn 2>&1 | tr '\r' '\n' | grep -v '\['
wait "$!" 2>/dev/null || true
grep -h 'member lost.*peer=n2' "$dir"/n*.log | sed -E 's/^time=[0-9-]+T([0-9:.]+)Z.* node=([a-z0-9]+) .*/\2 declared n2 lost at \1/' || true
