# cluster.sh: start a local cluster of `shufflenode serve` processes on 127.0.0.1, for the
# scripts beside it (sourced, not run). The caller sets:
#   bin   the shufflenode binary ("" builds ./cmd/shufflenode into $tmp)
#   tmp   a temporary directory the caller removes (node data and logs go there)
#   pids  an array the caller's cleanup stops (every serve process started is added)
# and calls start_cluster NODES [SERVE_FLAGS...], which fills apis and admins (the nodes'
# API and admin addresses) and returns once every node sees all NODES members (1 if not).

# build_bin builds the binary into $tmp unless $bin names one.
build_bin() {
	if [[ -z $bin ]]; then
		bin=$tmp/shufflenode
		(cd "$(dirname "${BASH_SOURCE[0]}")/.." && go build -o "$bin" ./cmd/shufflenode)
	fi
}

# free_port prints a TCP and UDP port on 127.0.0.1 that nothing listens on, below the kernel's
# ephemeral range: a port in it may be taken by an outgoing connection (or a listener on port 0)
# of a node started earlier before the node it was picked for binds it.
used_ports=" "
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
	local p
	while :; do
		p=$((10000 + RANDOM % (ephemeral_low - 10000)))
		[[ $used_ports == *" $p "* ]] && continue
		[[ -z $(ss -Hltun "sport = :$p" 2>/dev/null) ]] && break
	done
	used_ports+="$p "
	echo "$p"
}

# members prints how many members the node at API address $1 sees (0 if it does not answer).
members() {
	"$bin" status --node "$1" 2>/dev/null | grep -c '"name"' || true
}

# joined reports whether every node sees all $1 nodes.
joined() {
	local api
	for api in "${apis[@]}"; do
		[[ $(members "$api") -ge $1 ]] || return 1
	done
}

# start_cluster starts $1 serve processes n1..nN with the extra serve flags that follow; the
# others join n1 once it serves.
start_cluster() {
	local nodes=$1 i gossip api admin first_gossip="" join
	shift
	apis=() admins=()
	for i in $(seq "$nodes"); do
		gossip=$(free_port) api=$(free_port) admin=$(free_port)
		join=()
		[[ $i -gt 1 ]] && join=(--join "127.0.0.1:$first_gossip")
		[[ $i -eq 1 ]] && first_gossip=$gossip
		"$bin" serve --name "n$i" --data-dir "$tmp/n$i" --gossip "127.0.0.1:$gossip" \
			--api "127.0.0.1:$api" --admin "127.0.0.1:$admin" --profile local --log-level warn \
			"$@" "${join[@]}" 2>"$tmp/n$i.log" &
		pids+=($!) apis+=("127.0.0.1:$api") admins+=("127.0.0.1:$admin")
		if [[ $i -eq 1 ]]; then
			for _ in $(seq 100); do [[ $(members "$api") -ge 1 ]] && break; sleep 0.1; done
		fi
	done
	for _ in $(seq 150); do joined "$nodes" && return 0; sleep 0.2; done
	joined "$nodes"
}
