package job

// Where the shuffle, merge and set-index jobs read their input files
// (--read-on).
//
// A node can read an input task's Parquet file itself
// (flightproto.PutCmd.File): the rows then never pass through this process,
// which on a real cluster would read and send every input file alone. It
// needs the files at the same paths on the nodes as here (one machine, or a
// shared file system) and the nodes to allow reading there: an in-process
// cluster's nodes may read the job's input directories; a serve process
// only under its --input-root directories.
//
// With auto (the default), puts ask the nodes to read until one refuses
// (codes.PermissionDenied: no input root over the file, or the file is not
// there); from then on this process reads every file, the refused one
// included, and the report says why. The rows of each file are known here
// from its footer: a node that reads another count fails the put.

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/parquetio"
)

// Where input files are read: ShuffleConfig.ReadOn (the values of
// --write-on).
const (
	ReadAuto   = WriteAuto   // the nodes when they can, else this process
	ReadNodes  = WriteNodes  // the nodes, or the job fails
	ReadClient = WriteClient // this process
)

// inputDirs returns the absolute directories of files, each once.
func inputDirs(files []string) ([]string, error) {
	var dirs []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if d := filepath.Dir(abs); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// nodeInput is the part of a client.Job that has the nodes read the input
// files of in (unless f reads them here): each put names its file, with
// its rows from the footer, and done gets each file put's reply.
func (f ShuffleConfig) nodeInput(job *client.Job, in parquetio.Inputs, done func(t int, rows int64, reply flightproto.PutReply)) error {
	if f.ReadOn == ReadClient {
		return nil
	}
	paths := make([]string, len(in.Files))
	for i, p := range in.Files {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		paths[i] = abs
	}
	job.InputFile = func(t int) (string, uint64) { return paths[t], uint64(in.FileRows[t]) }
	job.FilesOnly = f.ReadOn == ReadNodes
	job.FilePut = func(t int, reply flightproto.PutReply) { done(t, in.FileRows[t], reply) }
	return nil
}

// readWhere says, for the report, who read the input files of res.
func readWhere(res *client.Result) string {
	nodes, why := res.NodeReads()
	switch {
	case nodes:
		return "read by the nodes"
	case why != nil:
		return fmt.Sprintf("read here (a node could not: %v)", why)
	}
	return "read here"
}
