package recovery_test

import (
	"fmt"

	"github.com/shufflenode/shufflenode/recovery"
)

// A successor sees the coordinator "a" down, pings the two members it sees
// up, and takes over in term 1 once they answer.
func ExampleFailover() {
	v := &recovery.View{
		Self:       "d",
		Candidates: []string{"a", "d", "b", "c"},
		Members:    4,
		Epoch:      recovery.Epoch{Coordinator: "a", Live: []string{"a", "b", "c", "d"}},
		Down:       map[string]bool{"a": true},
	}
	f := recovery.NewFailover()
	for d := f.Step(v); d.Action != recovery.Done; d = f.Step(v) {
		switch d.Action {
		case recovery.Ping:
			fmt.Println("ping", d.Nodes)
			for _, n := range d.Nodes {
				if f.Answered(n, true) {
					break
				}
			}
		case recovery.Verdict:
			fmt.Println("quorum", d.Quorum.Rule, d.Quorum.Met)
		case recovery.TakeOver:
			fmt.Println("take over in term", d.Term, "lost", d.Lost)
			v.Coordinating, v.Epoch = true, recovery.Epoch{Number: 1, Term: 1, Coordinator: "d", Live: []string{"b", "c", "d"}, Lost: d.Lost}
		}
	}
	// Output:
	// ping [b c]
	// quorum majority true
	// take over in term 1 lost [a]
}
