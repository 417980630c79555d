#!/usr/bin/env bash
# bench-ab.sh: two shufflenode binaries, back to back, interleaved, on the same host hour.
#
# The host's noise (±10-30% between runs and between hours) is larger than most single
# changes, so docs/benchmarks.md's figures compare a change with its starting point this way: for ROUNDS
# rounds, `A bench` then `B bench` (the in-process jobs); the same for `bench --cluster` with
# -c; then `bench --jobs merge,setindex --quick 16` MROUNDS times each (-m, default 1; A
# first in odd rounds, B first in even ones: the host slows whichever runs second) unless -M.
# Each job's lines go to OUT/*.txt as the bench prints them, and a summary of the medians per
# binary to stdout.
# Run it on an otherwise idle machine.
#
# Usage: scripts/bench-ab.sh [-r ROUNDS] [-c] [-M] [-m MROUNDS] [-o OUT] A B
#   A, B       shufflenode binaries (A: the starting point)
#   -r ROUNDS  rounds of the in-process (and cluster) bench (default 3)
#   -c         also run `bench --cluster` (4 real serve processes) ROUNDS times each
#   -M         skip merge and set-index
#   -m MROUNDS rounds of merge and set-index (default 1), alternating which binary runs first
#   -o OUT     directory for the raw output, without *.txt files (default: a new temporary one)
set -euo pipefail

rounds=3 cluster=0 merge=1 mrounds=1 out=""
while getopts "r:cMm:o:h" opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	c) cluster=1 ;;
	M) merge=0 ;;
	m) mrounds=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '2,18p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,18p' "$0"; exit 2; }
a=$1 b=$2
out=${out:-$(mktemp -d)}
mkdir -p "$out"
# The medians are read from every OUT/*.txt: an earlier run's files there would count too.
if compgen -G "$out/*.txt" >/dev/null; then
	echo "bench-ab: $out already holds *.txt files (an earlier run's?): give an empty or new -o" >&2
	exit 2
fi

# run NAME FILE ARGS...: one bench of binary NAME, its job lines appended to FILE. A bench
# that fails is reported (its whole output kept in OUT/failed-N.log) and the loop goes on.
failed=0
run() {
	local bin=$1 file=$2 log
	shift 2
	log=$(mktemp "$out/run-XXXXXX")
	if "$bin" bench "$@" >"$log" 2>&1; then
		echo "== $bin" >>"$file"
		grep -E '^(demo|rows|array|merge|set-index|memory|libp2p|Flight|Parquet|fresh)' "$log" >>"$file" || true
		rm -f "$log"
	else
		failed=$((failed + 1))
		mv "$log" "$out/failed-$failed.log"
		echo "bench-ab: $bin bench $* failed; its output: $out/failed-$failed.log" >&2
	fi
}

for _ in $(seq "$rounds"); do
	run "$a" "$out/inproc.txt"
	run "$b" "$out/inproc.txt"
done
if [ "$cluster" = 1 ]; then
	for _ in $(seq "$rounds"); do
		run "$a" "$out/cluster.txt" --cluster
		run "$b" "$out/cluster.txt" --cluster
	done
fi
if [ "$merge" = 1 ]; then
	for i in $(seq "$mrounds"); do
		first=$a second=$b
		if [ $((i % 2)) = 0 ]; then first=$b second=$a; fi
		run "$first" "$out/merge.txt" --jobs merge,setindex --quick 16
		run "$second" "$out/merge.txt" --jobs merge,setindex --quick 16
	done
fi

# Medians per binary and job: the run of the median MB/s, with its put+barrier, read, CPU s and faults.
for f in "$out"/*.txt; do
	echo "# $(basename "$f")"
	awk '/^== / { bin = $2; next }
		$1 ~ /^(memory|libp2p|Flight|Parquet|fresh):/ { next }
		{ n = NF; k = ($(n-2) ~ /^[0-9]+k$/) # a faults column (binaries before it have none)
		  label = bin; for (i = 1; i <= n - 10 - k; i++) label = label " " $i
		  printf "%s|%s|%s|%s|%s|%s\n", label, $(n-5-k), $(n-7-k), $(n-6-k), $(n-4-k), k ? $(n-2) : "-" }' "$f" |
		sort -t'|' -k1,1 -k2,2n |
		awk -F'|' '
			function flush() { if (n) { split(r[int((n + 1) / 2)], v, "|"); printf "%s: put+barrier %s s, read %s s, %s MB/s, %s CPU s, %s faults (median of %d)\n", key, v[3], v[4], v[2], v[5], v[6], n } }
			$1 != key { flush(); key = $1; n = 0 }
			{ r[++n] = $0 }
			END { flush() }'
done
echo "raw output: $out"
