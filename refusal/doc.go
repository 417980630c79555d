// Package refusal maps a node's errors to the refusal codes its handler
// replies with (Code), and a peer's refusal back to the sentinel error of
// its code (Sentinel, PeerError), so that a caller, and a client's status
// code, see what the peer meant. The sentinels are package shuffle's, and
// the few of packages puts and limits that a sender must not retry.
//
// # Concurrency
//
// The functions are pure; they are safe for concurrent use.
package refusal
