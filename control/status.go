package control

// Statuses of the coordinator's Reply to OpBegin and OpBarrier.
const (
	StatusOK       = "ok"
	StatusDone     = "done"     // begin: the task already has a done attempt
	StatusConflict = "conflict" // begin: the attempt runs on another node
	StatusStale    = "stale"    // begin: the sender is at an older epoch
	StatusRunning  = "running"  // barrier: not reached yet
	StatusSealed   = "sealed"   // barrier: reached
)
