package zarr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shufflenode/shufflenode/durable"
)

// metaFile is the name of an array's metadata document.
const metaFile = ".zarray"

// chunkKey returns the store key of chunk idx: "i.j.k" or "i/j/k", and "0"
// for the one chunk of a zero-dimensional array.
func chunkKey(idx []int, sep string) string {
	if len(idx) == 0 {
		return "0"
	}
	parts := make([]string, len(idx))
	for d, i := range idx {
		parts[d] = strconv.Itoa(i)
	}
	return strings.Join(parts, sep)
}

// readBounded reads the file at path, refusing one over limit bytes with
// ErrCorrupt. A missing file gives an error wrapping fs.ErrNotExist.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > int64(limit) {
		return nil, fmt.Errorf("%s: %d bytes, at most %d expected: %w", path, st.Size(), limit, ErrCorrupt)
	}
	buf := make([]byte, st.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrCorrupt, err)
	}
	return buf, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory, synced (if sync; else its write-back started) and then renamed
// over path, so readers see either the old file or the whole new one. It
// creates missing parent directories.
func writeAtomic(path string, data []byte, sync bool) (err error) {
	dir, base := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if !sync {
		durable.StartWriteback(f)
	} else if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ensureEmptyDir creates dir if missing and refuses one that has entries.
func ensureEmptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("%s holds %q: %w", dir, names[0], ErrExists)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// isNotExist reports whether err means a file does not exist.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}
