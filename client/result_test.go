package client

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// cut returns rows [0, n) as records cut at random points.
func cut(mem memory.Allocator, rng *rand.Rand, n int64) []arrow.Record {
	var recs []arrow.Record
	for lo := int64(0); lo < n; {
		hi := min(n, lo+1+rng.Int64N(40))
		recs = append(recs, testkit.Int64Range(mem, "row", lo, hi-lo))
		lo = hi
	}
	return recs
}

// TestResumerDeliversEachRowOnce breaks a stream after a random number of
// records, several times, each try cut into records differently, and checks
// that fn saw every row once and in order.
func TestResumerDeliversEachRowOnce(t *testing.T) {
	for seed := range 50 {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		const rows = 500
		var next int64
		res := &resumer{fn: func(rec arrow.Record) error {
			for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
				if v != next {
					t.Fatalf("seed %d: got row %d, want %d", seed, v, next)
				}
				next++
			}
			return nil
		}}
		for try := 0; next < rows; try++ {
			recs := cut(mem, rng, rows)
			breakAt := len(recs)
			if try < 4 {
				breakAt = rng.IntN(len(recs) + 1) // the owner dies here
			}
			fn := res.try()
			for _, rec := range recs[:breakAt] {
				if err := fn(rec); err != nil {
					t.Fatal(err)
				}
			}
			for _, rec := range recs {
				rec.Release()
			}
		}
		if next != rows || res.delivered != rows {
			t.Fatalf("seed %d: fn saw %d rows, resumer counted %d, want %d", seed, next, res.delivered, rows)
		}
		mem.AssertSize(t, 0)
	}
}

// TestResumerCallerError checks that fn's error comes back marked, so
// onOwner returns it as it is instead of retrying.
func TestResumerCallerError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	stop := errors.New("enough")
	res := &resumer{fn: func(arrow.Record) error { return stop }}
	recs := cut(mem, rand.New(rand.NewPCG(1, 2)), 10)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	err := res.try()(recs[0])
	var ce *callerError
	if !errors.As(err, &ce) || !errors.Is(err, stop) {
		t.Fatalf("error %v, want a callerError wrapping %v", err, stop)
	}
	if res.delivered != 0 {
		t.Errorf("delivered %d rows after fn failed, want 0", res.delivered)
	}
}

// TestMembersReply: the members reply decodes in its versioned form and in
// the bare list older nodes send.
func TestMembersReply(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"versioned", `{"version":1,"node":"a","members":[{"name":"a"},{"name":"b"}]}`},
		{"bare list", `[{"name":"a"},{"name":"b"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r membersReply
			if err := json.Unmarshal([]byte(tc.body), &r); err != nil || len(r.Members) != 2 || r.Members[1].Name != "b" {
				t.Fatalf("decode %s: %+v, %v", tc.body, r, err)
			}
		})
	}
}

// TestPickAvoidsAFailedNode: after a retryable failure on a node, attempts
// whose turn it is go to the next node that has not failed; a success, or
// every node failing, puts them back on their turn.
func TestPickAvoidsAFailedNode(t *testing.T) {
	r := &Result{clients: make([]*Client, 4), avoid: make([]atomic.Int64, 4)}
	unavailable := status.Error(codes.Unavailable, "connection refused")
	final := status.Error(codes.InvalidArgument, "bad schema")
	type ended struct {
		node int
		err  error
	}
	for _, step := range []struct {
		what  string
		ended []ended
		turn  int
		want  int
	}{
		{"no failures", nil, 5, 1},
		{"failures on 1 and 2", []ended{{1, unavailable}, {2, unavailable}}, 5, 3},
		{"a negative turn", nil, -3, 3},
		{"a final error on 3 (only retryable failures count)", []ended{{3, final}}, 3, 3},
		{"every node failed: its turn", []ended{{0, unavailable}, {3, unavailable}}, 2, 2},
		{"a success on 1", []ended{{1, nil}}, 2, 1},
	} {
		for _, e := range step.ended {
			r.putEnded(e.node, e.err)
		}
		if got := r.pick(step.turn); got != step.want {
			t.Fatalf("%s: pick(%d) = %d, want %d", step.what, step.turn, got, step.want)
		}
	}
}
