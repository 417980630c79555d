package shardnet_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shardnet"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// network answers every request with err and records what it was sent.
type network struct {
	err     error
	to      string
	typ     wire.Type
	payload []byte
}

func (n *network) RequestPayload(_ context.Context, to string, t wire.Type, p wire.Payload) (wire.Frame, error) {
	n.to, n.typ, n.payload = to, t, wire.Join(p.Parts)
	return wire.Frame{}, n.err
}

// retryAfter reports whether err is one the splitter retries, and after how long.
func retryAfter(err error) (time.Duration, bool) {
	var r splitter.RetryAfter
	if errors.As(err, &r) {
		return r.RetryAfter(), true
	}
	return 0, false
}

func TestSend(t *testing.T) {
	refused := &wire.Refusal{Code: wire.RefuseUnknownShuffle, Reason: "no such shuffle"}
	for _, tc := range []struct {
		name  string
		err   error
		retry bool
		after time.Duration
	}{
		{"acknowledged", nil, false, 0},
		{"busy: retried after the receiver's delay", &wire.BusyError{RetryAfter: 50 * time.Millisecond}, true, 50 * time.Millisecond},
		{"busy without a delay: retried after a millisecond", &wire.BusyError{}, true, time.Millisecond},
		{"refused: final", refused, false, 0},
		{"transport error: retried at once", fmt.Errorf("link cut"), true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &network{err: tc.err}
			var x shardnet.Sender
			x.Attach(n)
			b := &splitter.Batch{Shuffle: "s", Epoch: 2, Dest: "node-1"}
			err := x.Send(context.Background(), b)
			if n.to != "node-1" || n.typ != wire.TypeShards {
				t.Fatalf("sent to %q as %v, want node-1 as shards", n.to, n.typ)
			}
			m, derr := shard.Decode(n.payload)
			if derr != nil || m.Shuffle != "s" || m.Epoch != 2 {
				t.Fatalf("payload decodes to %+v (%v), want shuffle s epoch 2", m, derr)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Send: %v, want %v", err, tc.err)
			}
			after, retry := retryAfter(err)
			if retry != tc.retry || after != tc.after {
				t.Fatalf("retry %v after %v, want %v after %v", retry, after, tc.retry, tc.after)
			}
		})
	}
}

func TestSendDetached(t *testing.T) {
	var x shardnet.Sender
	if err := x.Send(context.Background(), &splitter.Batch{Dest: "n"}); !errors.Is(err, shardnet.ErrDetached) {
		t.Fatalf("Send before Attach: %v, want ErrDetached", err)
	}
}
