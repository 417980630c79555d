// Package failover drives the recovery core (package recovery) for every
// shuffle one node holds: it performs the core's decisions with the
// node's network, clock and goroutines. The core decides; this package
// asks, waits and acts.
//
//   - Membership (driver.go): a member seen failed or gone starts a
//     failover round for every shuffle (recovery.Failover): ping the
//     members the core asks about, then take over as the successor of a
//     coordinator seen down, or, as the coordinator, declare members lost
//     (coordinator.Coordinator.Lose). A member back starts a round too,
//     and a rejoin check.
//   - Takeover (takeover.go): control.OpTakeover to every live member,
//     each moves to the successor's epoch and replies with its facts; the
//     successor rebuilds the barrier from them (coordinator.Rebuild).
//   - Quorum (quorum.go): the node's view of a shuffle for the core, the
//     pings (a node silent within the last probe is not asked again), and
//     the last quorum found short, which the service turns into
//     ErrNoQuorum for barrier waits.
//   - Rejoin (rejoin.go): every Config.Recheck, and when members come
//     back, a node asks the shuffles' candidates whether it is still in
//     them and drops those nobody counts it in; it answers such checks.
//   - Fencing (fence.go): of two coordinators, the one of the higher term
//     tells the other the current epoch (it steps down); a coordinator
//     whose decisions are refused for their term asks its successors.
//   - Restart (restart.go): a member back without its state tells the
//     coordinator, which declares it lost.
//
// The service implements Host (lookups, requests, background work,
// records, drops) and gives each shuffle's failover part (Shuffle) to the
// driver.
//
// The driver's timers run on Config.Clock (the wall clock by default):
// the period of the rejoin checks and the age below which a shuffle is not
// checked, a dropped takeover's second look, and how long a member silent
// to a ping is not asked again. Request timeouts and retry back-offs are
// contexts and timers of package time; tests that need them fake run in a
// testing/synctest bubble.
//
// # Concurrency
//
// Every method of Driver is safe for concurrent use. Rounds of one shuffle
// are serialised by its Shuffle (one failover round or epoch move at a
// time); rounds of different shuffles run concurrently. Background work
// runs through Host.Background, which the service's Close waits for.
package failover
