// Package recovery is the pure core of what happens when a node of a
// shuffle is lost, frozen, cut off or back: who coordinates (candidate
// order and terms), whether a successor may take over and whether a
// coordinator may declare members lost (the quorum rules, which keep the
// two sides of a partition from both moving a shuffle on), whether a node
// back from a cut still belongs to a shuffle or lets go of it (rejoin), and
// which of two coordinators steps down (fencing by term), which finished
// tasks a lost receiver's data sends back to run again and whether their
// replay may send only what moved (replay choice: OnLoss, OnExcuse,
// PartialReplay), how an epoch moves (Adopt, Absorbed, Reseal), and what a
// node taking over infers from the members' commits (Committed,
// InferSent). The barrier and the coordinator keep the records and call
// these rules over plain facts per task and receiver.
//
// It holds no goroutines, sockets or clock: its types take events (the
// node's view of a shuffle, a ping answered, a check answered) and return
// decisions (ping these members, take over in term T, declare these members
// lost, decide again later, drop the shuffle, step down). The caller
// performs them. Time never enters: what waits (a ping's timeout, a
// recheck's period) is the caller's, and arrives as an answer or as the
// next event.
//
// # The caller's duties, in order
//
// On every membership change (a member seen failed, gone or back) and for
// every shuffle it holds, one round at a time per shuffle:
//
//  1. Start a round with NewFailover and Step it with the node's View of
//     the shuffle as it is now (its epoch, whether it holds the
//     coordinator part, the members it sees down).
//  2. Ping: ping Decision.Nodes in parallel, feed each answer to Answered
//     (a reply of any kind, a refusal too, is an answer; a timeout is
//     not), and stop waiting once it reports the poll settled.
//  3. Verdict: record the quorum; while it is short, warn once and answer
//     barrier waits with "no quorum".
//  4. TakeOver: move to the epoch with Decision.Lost in Decision.Term,
//     gather the members' facts, rebuild the barrier and coordinate.
//  5. Later: the epoch moved while the node pinged: run a new round after
//     the membership events queued behind this one were handled.
//  6. Lose: declare each of Decision.Nodes lost, in order (a new epoch per
//     node, broadcast to the survivors).
//
// Step again with a fresh View after each decision, until Done.
//
// Every recheck period, and when members come back, for every shuffle it
// holds and is old enough:
//
//  7. Not coordinating: ask CheckTargets, the coordinator it knows first;
//     First decides on its answer alone when it can, Decide on all of them
//     otherwise; drop the shuffle when the Ruling says so.
//  8. Coordinating: ask Back (the members it declared lost and sees up)
//     and act on Fence for each answer: Tell sends them the current epoch
//     (they step down), StepDown lets go of the shuffle here. A coordinator
//     whose own decisions were refused for their term asks Successors too.
//
// Answer a check from another node with AnswerCheck.
//
// When the node itself leaves on purpose (a drain), step a Drain with a
// DrainView until it says DrainLeave: refuse new puts, wait while puts
// run, hand over the shuffles it lists; a deadline that passed, a kill or
// a failed handover make it leave as lost, once. PlanHandOver says how to
// treat each shuffle held (nothing to copy, copy its partitions, or leave
// it to the loss path); OnHandOver is OnLoss for the planned departure
// (what the node committed is kept: it copies it); a coordinator keeps its
// handovers in a HandOvers, which holds the seal back while one runs and
// ends each once, finished or fallen back to the loss path.
//
// # Concurrency
//
// Nothing here is safe for concurrent use, and nothing needs to be: a
// Failover belongs to one round, the functions are pure.
package recovery
