package flightproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A DoPut of several input tasks (PutCmd.Tasks): the stream's batches are
// the tasks' rows one task after another, and the first batch of each task
// carries its PutTag as app metadata (a task without rows sends one empty
// batch with its tag). The node runs each task as the put of its own DoPut
// would (begin, rows, end markers, done report, exactly once per task and
// partition) and answers each with a PutTaskReply as it finishes, in any
// order. A node before revision 4 takes no such stream: ask its revision
// first (members or Handshake).

// MinPutTasksRevision is the first revision whose nodes take DoPuts of
// several dataframe tasks, and MinArrayPutTasksRevision of several array
// tasks (each task one chunk record, ChunkRecord).
const (
	MinPutTasksRevision      = 4
	MinArrayPutTasksRevision = 5
)

// MaxPutTasks bounds the tasks of one DoPut.
const MaxPutTasks = 65536

// ErrBadPutTag marks a task tag a node refuses.
var ErrBadPutTag = errors.New("flightproto: bad put task tag")

// PutTag is the app metadata of the first batch of each task of a DoPut of
// several tasks.
type PutTag struct {
	Task    uint64 `json:"task"`
	Attempt uint32 `json:"attempt"`
	// Rows, when not 0, is the task's rows, checked as PutCmd.Rows.
	Rows uint64 `json:"rows,omitempty"`
}

// PutTaskReply is the app metadata of the PutResult that answers one task
// of a DoPut of several tasks: its PutReply, or the status code and message
// its own DoPut would have ended with.
type PutTaskReply struct {
	Task    uint64 `json:"task"`
	Attempt uint32 `json:"attempt"`
	PutReply
	// Code is the gRPC status code of a failed task (0: it succeeded).
	Code  uint32 `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// EncodePutTag returns t as app metadata.
func EncodePutTag(t PutTag) []byte {
	b, _ := json.Marshal(t)
	return b
}

// DecodePutTag decodes a task tag: one JSON object with the task (a
// number, required) and optionally its attempt and rows, nothing else.
func DecodePutTag(b []byte) (PutTag, error) {
	var raw struct {
		Task    *uint64 `json:"task"`
		Attempt uint32  `json:"attempt"`
		Rows    uint64  `json:"rows"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&raw); err != nil {
		return PutTag{}, fmt.Errorf("%w: %w", ErrBadPutTag, err)
	}
	if d.More() {
		return PutTag{}, fmt.Errorf("%w: bytes after the tag", ErrBadPutTag)
	}
	if raw.Task == nil {
		return PutTag{}, fmt.Errorf("%w: no task", ErrBadPutTag)
	}
	return PutTag{Task: *raw.Task, Attempt: raw.Attempt, Rows: raw.Rows}, nil
}
