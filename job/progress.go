package job

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Progress is told each finished step of a job's phase ("put", "read",
// "write", ...): done of total. It may be called from several goroutines.
type Progress func(phase string, done, total int)

// orNop returns p, or a Progress that does nothing when p is nil.
func (p Progress) orNop() Progress {
	if p == nil {
		return func(string, int, int) {}
	}
	return p
}

// NewProgress returns a Progress that redraws one line on w at most every
// 100 ms, and ends the line when a phase completes.
func NewProgress(w io.Writer) Progress {
	var mu sync.Mutex
	last := time.Time{}
	return func(phase string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done < total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		const width = 40
		n := width * done / max(total, 1)
		fmt.Fprintf(w, "\r%-5s [%-*s] %d/%d", phase, width, strings.Repeat("#", n), done, total)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}

// FormatBytes prints n with a binary unit and one decimal ("1.5 GiB").
func FormatBytes(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if f < 1024 || u == "GiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
		f /= 1024
	}
	return ""
}
