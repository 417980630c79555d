#!/usr/bin/env bash
# status-page-shot.sh: a screenshot of a node's admin status page, taken by headless Chromium,
# so that a broken page is seen, not assumed. Installs nothing.
#
# With -u it shoots that page (a running node's admin address). Without, it builds (or takes)
# the shufflenode binary, starts NODES serve processes on 127.0.0.1, runs
# `shufflenode demo --cluster` against them, and shoots the coordinator's page while the demo
# runs (the shuffle in progress), once it is sealed, and once the demo's reads show in the page's
# "read out of here" column (reads, rows and bytes out); then it stops the nodes and removes its
# temporary directory. It also checks the HTML (headings, a shuffle row) with curl.
#
# Usage: scripts/status-page-shot.sh [-u URL] [-o OUT_DIR] [-n NODES] [-b BINARY] [-- DEMO_ARGS...]
#   -u URL      shoot this page only (e.g. http://127.0.0.1:7948/)
#   -o OUT_DIR  where the PNGs go (default: the current directory)
#   -n NODES    serve processes (default 3)
#   -b BINARY   shufflenode binary (default: go build ./cmd/shufflenode into the temp dir)
#   DEMO_ARGS   demo flags (default: --data 2GiB --tasks 200 --partitions 100: big enough that the
#               sealed shuffle and its reads last a few seconds on 2 cores)
# Needs `chromium` (Debian package chromium) or `chromium-browser`, and curl; exits 3 without.
set -euo pipefail

url="" out=. nodes=3 bin=""
while getopts "u:o:n:b:h" opt; do
	case $opt in
	u) url=$OPTARG ;;
	o) out=$OPTARG ;;
	n) nodes=$OPTARG ;;
	b) bin=$OPTARG ;;
	*) sed -n '2,19p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
demo_args=("$@")
[[ ${#demo_args[@]} -gt 0 ]] || demo_args=(--data 2GiB --tasks 200 --partitions 100)

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
	echo "status-page-shot: no chromium on PATH (Debian: apt-get install chromium); nothing shot" >&2
	exit 3
fi
command -v curl >/dev/null || { echo "status-page-shot: curl is required" >&2; exit 3; }
mkdir -p "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/status-page-shot.XXXXXX")
pids=() demo=""
cleanup() {
	[[ -n $demo ]] && kill "$demo" 2>/dev/null || true
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shoot URL FILE: a 1400x900 screenshot of URL into FILE, in a fresh browser profile.
shoot() {
	local profile
	profile=$(mktemp -d "$tmp/profile.XXXXXX")
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --window-size=1400,900 --screenshot="$2" "$1" >"$tmp/browser.log" 2>&1 || {
		echo "status-page-shot: chromium failed on $1:" >&2
		tail -n 5 "$tmp/browser.log" >&2
		return 1
	}
	[[ -s $2 ]] || { echo "status-page-shot: chromium wrote no $2" >&2; return 1; }
	echo "status-page-shot: $1 -> $2 ($(stat -c %s "$2") bytes)"
}

# check_html URL WANT...: the page answers 200 and holds every WANT.
check_html() {
	local page=$tmp/page.html want
	curl -fsS -o "$page" "$1" || { echo "status-page-shot: $1 does not answer" >&2; return 1; }
	shift
	for want in "$@"; do
		grep -qF -- "$want" "$page" || { echo "status-page-shot: the page lacks '$want'" >&2; return 1; }
	done
}

if [[ -n $url ]]; then
	check_html "$url" "<h1>shufflenode" "<h2>Shuffles" "<h2>Members"
	shoot "$url" "$out/status-page.png"
	exit 0
fi

source "$(dirname "$0")/cluster.sh"
build_bin
start_cluster "$nodes" --memory-limit 64MiB || true

# The demo creates its shuffle on a node chosen from the shuffle ID, which coordinates it: find
# that node ("nK") in n1's /status, and shoot its page.
"$bin" demo --cluster "${apis[0]}" "${demo_args[@]}" >"$tmp/demo.out" 2>&1 &
demo=$!
coord=""
for _ in $(seq 300); do
	coord=$(curl -fsS "http://${admins[0]}/status" 2>/dev/null | grep -oE '"coordinator":"n[0-9]+"' | head -n 1 | grep -oE '[0-9]+' || true)
	[[ -n $coord ]] && break
	kill -0 "$demo" 2>/dev/null || break
	sleep 0.1
done
[[ -n $coord ]] || { echo "status-page-shot: no shuffle appeared on n1's /status" >&2; exit 1; }
page="http://${admins[coord - 1]}/"
for _ in $(seq 300); do
	curl -fsS "$page" 2>/dev/null | grep -q "<progress" && break
	kill -0 "$demo" 2>/dev/null || break
	sleep 0.1
done
sleep 1
check_html "$page" "<h1>shufflenode n$coord" "<h2>Shuffles (1)" "committed" "rows, " "Members ($nodes)"
shoot "$page" "$out/status-page-running.png"
# Once sealed, the demo reads every partition and closes the shuffle: shoot it in between.
sealed=""
while kill -0 "$demo" 2>/dev/null; do
	if curl -fsS "$page" 2>/dev/null | grep -q 'class="sealed"'; then
		shoot "$page" "$out/status-page-sealed.png" && sealed=1
		break
	fi
	sleep 0.1
done
# The reads: a nonzero count of reads out of this node's partitions.
reading=""
while [[ -n $sealed ]] && kill -0 "$demo" 2>/dev/null; do
	if curl -fsS "$page" 2>/dev/null | grep -qE '<td class="n">[1-9][0-9]*, [0-9]+ rows, '; then
		shoot "$page" "$out/status-page-reading.png" && reading=1
		break
	fi
	sleep 0.1
done
wait "$demo" || { echo "status-page-shot: the demo failed:" >&2; cat "$tmp/demo.out" >&2; exit 1; }
demo=""
[[ -n $sealed ]] || echo "status-page-shot: the demo closed its shuffle before a sealed page was seen (use more --data)" >&2
[[ -n $reading ]] || echo "status-page-shot: the demo closed its shuffle before its reads were seen (use more --data)" >&2
