package api

// Ops that write their result to a file on the node (OpTicket.Write).
//
// A node writes only under the output roots its operator gave it
// (Security.OutputRoots): the path's directory, with symlinks resolved,
// must be a root or lie under one. The file is a parquetio.Writer's: rows
// go to a hidden temporary file in that directory, which Commit syncs and
// renames, so the file appears whole or not at all and a retried op
// (another owner after a loss, or the same node again) just writes it
// again. The stream then carries one empty batch with the stats, sent
// after the commit: a caller that saw it knows the file is durable.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/parquetio"
)

// resolveRoots checks the (kind: "input" or "output") roots and returns
// them with symlinks resolved.
func resolveRoots(kind string, dirs []string) ([]string, error) {
	roots := make([]string, 0, len(dirs))
	for _, r := range dirs {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("%w: %s root %q is not an absolute path", ErrSecurity, kind, r)
		}
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			return nil, fmt.Errorf("%w: %s root: %w", ErrSecurity, kind, err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s root %q is not a directory", ErrSecurity, kind, r)
		}
		roots = append(roots, real)
	}
	return roots, nil
}

// writePath returns where the node writes w's file (see resolveWrite).
func (s *Server) writePath(w *flightproto.WriteSpec) (string, error) {
	return resolveWrite(s.roots, s.svc.Name(), w.Path)
}

// resolveWrite returns path with its directory's symlinks resolved, if
// that directory is one of roots (resolved) or under one; else an error
// wrapping ErrWriteRefused that names node.
func resolveWrite(roots []string, node, path string) (string, error) {
	if len(roots) == 0 {
		return "", fmt.Errorf("%w: node %s writes no files (it has no output root: serve --output-root)", ErrWriteRefused, node)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("%w: the directory of %s is not on node %s: %w", ErrWriteRefused, path, node, err)
	}
	if underAny(dir, roots) {
		return filepath.Join(dir, filepath.Base(path)), nil
	}
	return "", fmt.Errorf("%w: %s is outside node %s's output roots (%s)", ErrWriteRefused, path, node, strings.Join(roots, ", "))
}

// underAny reports whether dir is one of roots or lies under one.
func underAny(dir string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return under(dir, r) })
}

// under reports whether dir is root or lies under it (both clean and
// absolute).
func under(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// opSink takes an op's result: a stream (opWriter) or a file (fileSink).
type opSink interface {
	write(rec arrow.Record) error
	writeSlice(rec arrow.Record, from, to int64) error
	// close ends the result: the stream, or the file's commit and then
	// the stats on the stream.
	close() error
	// abort drops a result that failed (the file's temporary file).
	abort()
}

// newSink returns the sink of op's result of schema, whose stats so far
// are st: the stream itself, or, for an op with Write, the file at path
// (from writePath).
func (s *Server) newSink(stream flight.FlightService_DoGetServer, op flightproto.OpTicket, path string, schema *arrow.Schema, st flightproto.OpStats) (opSink, error) {
	if op.Write == nil {
		return s.newOpWriter(stream, schema, st), nil
	}
	return s.newFileSink(stream, op, path, schema, st)
}

// newFileSink returns the sink that writes op's result to the file at path
// (op.Write's, checked by writePath).
func (s *Server) newFileSink(stream flight.FlightService_DoGetServer, op flightproto.OpTicket, path string, schema *arrow.Schema, st flightproto.OpStats) (*fileSink, error) {
	cfg := writeConfig(op.Write)
	cfg.PlanKey, cfg.Plans = planKey(op, path), s.plans
	pw, err := parquetio.Create(path, schema, cfg)
	if err != nil {
		return nil, err
	}
	return &fileSink{s: s, stream: stream, schema: schema, st: st, pw: pw}, nil
}

// writeConfig is the Parquet writer config of w (checked by
// DecodeOpTicket).
func writeConfig(w *flightproto.WriteSpec) parquetio.WriteConfig {
	return parquetio.WriteConfig{Compression: parquetio.Compression(w.Compression), NoDictionary: w.NoDictionary, DeferSync: w.DeferSync}
}

// planKey is the key under which the files of one op's output share their
// Parquet writers' choices (parquetio.WriteConfig.PlanKey): the op, its
// shuffles (a job's own) and the directory written to.
func planKey(op flightproto.OpTicket, path string) string {
	return op.Op + "\x00" + strings.Join(op.Shuffles, ",") + "\x00" + filepath.Dir(path)
}

// fileSink writes an op's result to a Parquet file.
type fileSink struct {
	s      *Server
	stream flight.FlightService_DoGetServer
	schema *arrow.Schema
	st     flightproto.OpStats
	pw     *parquetio.Writer
}

func (f *fileSink) write(rec arrow.Record) error { return f.pw.Write(rec) }

func (f *fileSink) writeSlice(rec arrow.Record, from, to int64) error {
	sl := rec.NewSlice(from, to)
	defer sl.Release()
	return f.pw.Write(sl)
}

func (f *fileSink) abort() { f.pw.Abort() }

// close commits the file, then sends the stats with its rows and size.
func (f *fileSink) close() error {
	rows := f.pw.Rows()
	if err := f.pw.Commit(); err != nil {
		return err
	}
	f.st.OutputRows, f.st.FileBytes = rows, f.pw.Size()
	return f.s.newOpWriter(f.stream, f.schema, f.st).close()
}
