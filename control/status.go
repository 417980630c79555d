package control

// Statuses of the coordinator's Reply to OpBegin and OpBarrier, and of a
// candidate's Reply to OpCheck.
const (
	StatusOK       = "ok"
	StatusDone     = "done"     // begin: the task already has a done attempt
	StatusConflict = "conflict" // begin: the attempt runs on another node
	StatusStale    = "stale"    // begin: the sender is at an older epoch
	StatusRunning  = "running"  // barrier: not reached yet
	StatusSealed   = "sealed"   // barrier: reached
	StatusMember   = "member"   // check: I coordinate it and the asker is live in my epoch
	StatusLost     = "lost"     // check: I coordinate it and the asker was lost (Epoch: my epoch)
	StatusClosed   = "closed"   // check: its client closed it (I freed it on a close)
	StatusUnknown  = "unknown"  // check: I do not coordinate it (never had it, freed it otherwise, or follow another)
)
