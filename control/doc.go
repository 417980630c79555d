// Package control is the shuffle's control protocol between nodes: the
// messages (Msg, Reply) that create and close shuffles, register and report
// task attempts and commits, poll the barrier, and carry the coordinator's
// seal, fail and epoch decisions, with their codec (Encode, Decode) and the
// retry rule for a request. Shard data travels in package shard, not here.
//
// Who sends what: a node creating a shuffle sends OpCreate to every member
// (it becomes the coordinator); the node running a task attempt sends
// OpBegin and OpDone to the coordinator, or OpTasks with the begins and
// dones of many of its attempts in Tasks (one reply entry each, each handled
// and refused as the single message it stands for); a receiver sends OpCommitted, with
// the commits made since its previous report in Commits (one message for
// many tasks; a message with Task and Held alone is one commit); any
// node polls OpBarrier; the coordinator sends OpSeal, OpFail and OpEpoch to
// the members; any node sends OpClose. When the coordinator is lost, its
// successor sends OpTakeover to the members, which move to the successor's
// epoch and reply with their Facts. Seal, fail, epoch and takeover carry the
// coordinator's Term: members refuse those of an older term. A member that
// may have missed decisions (it was cut off) sends OpCheck to the
// shuffle's coordinator candidates: each says whether it coordinates the
// shuffle with the member live (StatusMember) or lost (StatusLost), freed
// it on a close (StatusClosed), or none of these (StatusUnknown); a
// coordinator's answer carries its Term, so that of two coordinators the
// one of the higher term sends the other its epoch (which declares it lost)
// or the lower one steps down. A member restarted without its state of a
// shuffle sends OpRestarted to the coordinator, which declares it lost.
// A member that drains sends OpHandOver to the coordinator of each shuffle
// whose partitions it holds alone (the coordinator moves the epoch without
// it and replays nothing it committed), copies those partitions to their
// new owners, then sends OpHandedOver (with a Reason if the copy failed).
//
// The caller's duties: encode every sent Msg with Encode (the reports sent
// once or more per task, OpBegin, OpDone, OpCommitted and OpTasks, go in a
// compact binary form marked by its first byte; every other message as
// JSON), decode every received body with Decode (it reads both forms,
// bounds the size, the counts and the strings before allocating, and checks
// the shuffle ID) and fill only the fields the Op uses. Replies are JSON.
//
// Concurrency: the package has no state; Retry blocks until it is done or
// ctx ends.
package control
