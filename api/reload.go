package api

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// reloadEvery is how often, at most, a node looks at its certificate, key,
// client CA and token files for a change: on the first handshake or call
// after it.
const reloadEvery = time.Second

// fileStamp tells versions of a file apart: the SHA-256 of its content.
// A size and modification time would miss a rewrite of the same size
// within one tick of the file system's clock; these files are a few
// kilobytes, read once a second.
type fileStamp [sha256.Size]byte

// stampsOf returns the stamps of paths (reading follows the symlinks a
// Kubernetes secret volume swaps).
func stampsOf(paths []string) ([]fileStamp, error) {
	st := make([]fileStamp, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		st[i] = sha256.Sum256(b)
	}
	return st, nil
}

// reloading holds a value loaded from files and loads it again when any of
// them changes, checked at most every reloadEvery. A load that fails (a
// rotation caught half written, a file briefly missing) keeps the last good
// value, logs why, and is tried again at the next check. Safe for
// concurrent use.
type reloading[T any] struct {
	what  string // for the log: "certificate", "token"...
	paths []string
	load  func() (T, error)
	log   *slog.Logger

	val     atomic.Pointer[T]
	born    time.Time    // holds a monotonic clock reading: intervals are measured from it
	checked atomic.Int64 // nanoseconds from born to the last check

	mu     sync.Mutex // serialises checks
	stamps []fileStamp
}

// newReloading loads the value once; that first load must succeed.
func newReloading[T any](what string, log *slog.Logger, load func() (T, error), paths ...string) (*reloading[T], error) {
	r := &reloading[T]{what: what, paths: paths, load: load, log: log, born: time.Now()}
	st, err := stampsOf(paths)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSecurity, what, err)
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	r.val.Store(&v)
	r.stamps = st
	r.checked.Store(r.now())
	return r, nil
}

// get returns the current value, first loading it again if a check is due
// and a file changed.
func (r *reloading[T]) get() T {
	if r.now()-r.checked.Load() >= int64(reloadEvery) {
		r.check()
	}
	return *r.val.Load()
}

// now is the monotonic time since r was made, in nanoseconds (immune to
// steps of the wall clock, which a virtual machine's may take).
func (r *reloading[T]) now() int64 { return int64(time.Since(r.born)) }

// check loads the value again if a file changed since the last load.
func (r *reloading[T]) check() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if now-r.checked.Load() < int64(reloadEvery) {
		return // another caller just checked
	}
	r.checked.Store(now)
	st, err := stampsOf(r.paths)
	if err != nil {
		r.log.Warn("api: cannot look at a security file; keeping the loaded one", "what", r.what, "err", err)
		return
	}
	if slices.Equal(st, r.stamps) {
		return
	}
	v, err := r.load()
	if err != nil {
		r.log.Warn("api: a security file changed but does not load; keeping the loaded one", "what", r.what, "err", err)
		return
	}
	r.val.Store(&v)
	r.stamps = st
	r.log.Info("api: reloaded a security file", "what", r.what, "files", r.paths)
}
