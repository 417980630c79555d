package service_test

import (
	"encoding/json"
	"testing"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// TestSimForgedAuthor: a member cannot speak for another. A fail decision
// in the coordinator's name, or a create naming another coordinator, sent
// by some other member is refused as a bad request and changes nothing;
// the same decision from the coordinator itself is applied.
func TestSimForgedAuthor(t *testing.T) {
	t.Parallel()
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	f := newFrame("forged", 4, 3, 100, 1)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	coord, victim, intruder := c.svcs[0].Name(), c.svcs[2], member.Member{Name: c.svcs[1].Name()}
	fail := control.Msg{Op: control.OpFail, Shuffle: f.id, Node: coord, Reason: "forged"}
	create := control.Msg{Op: control.OpCreate, Shuffle: "forged-2", Spec: newFrame("forged-2", 1, 1, 1, 1).spec(),
		Coordinator: coord, Members: []string{coord, intruder.Name, victim.Name()}}
	for _, m := range []control.Msg{fail, create} {
		if rt, reply := victim.Handle(ctx, intruder, controlFrame(t, m)); rt != wire.TypeRefused {
			t.Fatalf("%s in %s's name from %s: reply %v %q, want a refusal", m.Op, coord, intruder.Name, rt, reply)
		}
	}
	if in, err := victim.Info(f.id); err != nil || in.Phase == service.Failed {
		t.Fatalf("after a forged fail: phase %v, %v; want the shuffle untouched", in.Phase, err)
	}
	if got := victim.Shuffles(); len(got) != 1 {
		t.Fatalf("after a forged create the victim holds %v", got)
	}
	if rt, reply := victim.Handle(ctx, member.Member{Name: coord}, controlFrame(t, fail)); rt != wire.TypeAck {
		t.Fatalf("the coordinator's own fail: reply %v %q, want an ack", rt, reply)
	}
	if in, _ := victim.Info(f.id); in.Phase != service.Failed {
		t.Fatalf("after the coordinator's fail: phase %v, want Failed", in.Phase)
	}
}

func controlFrame(t *testing.T, m control.Msg) wire.Frame {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return wire.Frame{Type: wire.TypeControl, Payload: b}
}
