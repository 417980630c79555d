package simnet_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// Two nodes; the second crashes and the first hears of it.
func Example() {
	nw, _ := simnet.New(simnet.Config{Rand: rand.New(rand.NewPCG(1, 0))})
	defer nw.Close()
	upper := func(_ context.Context, from member.Member, req wire.Frame) (wire.Type, []byte) {
		return wire.TypeAck, []byte(from.Name + " said " + string(req.Payload))
	}
	a, _ := nw.Add("a", upper)
	_, _ = nw.Add("b", upper)
	events, stop := a.Subscribe(1)
	defer stop()

	f, err := a.Request(context.Background(), "b", wire.TypeControl, []byte("hello"))
	fmt.Println(string(f.Payload), err)
	_ = nw.Kill("b")
	e := <-events
	fmt.Println(e.Kind, e.Member.Name, len(a.Members()))
	// Output:
	// a said hello <nil>
	// fail b 1
}
