package api

// Puts whose input the node reads itself (flightproto.PutCmd.File).
//
// A client that shares a file system with the nodes sends a put with the
// path of the task's Parquet file and no batches; the node reads the file
// in batches, casts them to the put's schema (as a client does for merge
// keys) and puts them as if they had come over the stream: the same
// declared row count is checked at the end, the same exactly-once rules
// hold, and a retry on another node reads the file again. A node reads
// only under the input roots its operator gave it (Security.InputRoots):
// the file, with symlinks resolved, must lie under a root.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/service"
)

// resolveRead returns path with its symlinks resolved, if it is an
// absolute, clean path of a file under one of roots (resolved); else an
// error wrapping ErrReadRefused that names node.
func resolveRead(roots []string, node, path string) (string, error) {
	if len(roots) == 0 {
		return "", fmt.Errorf("%w: node %s reads no input files (it has no input root: serve --input-root)", ErrReadRefused, node)
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return "", fmt.Errorf("%w: input file %q is not an absolute, clean path", ErrReadRefused, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not on node %s: %w", ErrReadRefused, path, node, err)
	}
	if underAny(filepath.Dir(real), roots) {
		return real, nil
	}
	return "", fmt.Errorf("%w: %s is outside node %s's input roots (%s)", ErrReadRefused, path, node, strings.Join(roots, ", "))
}

// fileInput yields the batches of a put's input file as records of the
// put's schema.
type fileInput struct {
	r      *parquetio.Reader
	schema *arrow.Schema
	mem    memory.Allocator
	last   arrow.Record // the last batch returned, released by the next call
	desc   string       // "shuffle S task T: file F on node N", for errors
}

// openInput opens cmd.File for a put of schema, after checking it is under
// the node's input roots.
func (s *Server) openInput(ctx context.Context, cmd flightproto.PutCmd, schema *arrow.Schema) (*fileInput, error) {
	desc := fmt.Sprintf("shuffle %s task %d: file %s on node %s", cmd.Shuffle, cmd.Task, cmd.File, s.svc.Name())
	if s.isArray(cmd.Shuffle) {
		return nil, fmt.Errorf("%w: %s: input files are for dataframe shuffles", service.ErrBadInput, desc)
	}
	path, err := resolveRead(s.inRoots, s.svc.Name(), cmd.File)
	if err != nil {
		return nil, fmt.Errorf("shuffle %s task %d: %w", cmd.Shuffle, cmd.Task, err)
	}
	r, err := parquetio.Open(ctx, path, s.mem, parquetio.DefaultBatchRows)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", service.ErrBadInput, desc, err)
	}
	return &fileInput{r: r, schema: schema, mem: s.mem, desc: desc}, nil
}

// next returns the file's next batch cast to the put's schema, or io.EOF.
func (f *fileInput) next() (arrow.Record, error) {
	f.releaseLast()
	rec, err := f.r.Next()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", service.ErrBadInput, f.desc, err)
	}
	if f.last, err = dfops.CastRecord(f.mem, rec, f.schema); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", service.ErrBadInput, f.desc, err)
	}
	return f.last, nil
}

func (f *fileInput) releaseLast() {
	if f.last != nil {
		f.last.Release()
		f.last = nil
	}
}

// close releases the last batch and closes the file.
func (f *fileInput) close() {
	f.releaseLast()
	f.r.Close()
}
