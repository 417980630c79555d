// Package create plans the creates of one node (docs/design.md §3.1):
// before a shuffle is created anywhere, a Planner checks its spec against
// the node's caps (package limits) and plans it once (spec.Precheck), so
// that a spec that does not plan is refused on the node asked before any
// other member spends on it; then it pins the members the shuffle starts
// from: the live members as the node sees them, or, for a spec
// co-partitioned with a shuffle the node holds, that shuffle's members,
// lost members and ownership seed, so both ownership maps are the same
// partition for partition. On each member, CheckInstall checks a create
// message before the member builds the shuffle.
//
// The caller's duties: fill Config with the node's view (its caps, its
// members, the shuffles it holds), broadcast the create to Pinned.Live
// and undo it where it failed.
//
// # Concurrency
//
// A Planner holds no state of its own; it is safe for concurrent use as
// far as its Config's funcs are.
package create
