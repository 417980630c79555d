package control

import (
	"errors"
	"fmt"
	"slices"
)

// ErrAuthor: a control message speaks in the name of a node other than
// the member that sent it.
var ErrAuthor = errors.New("control: message from another node than its author")

// CheckAuthor refuses c, sent by the member named from (the peer the
// network authenticated), if its author is another node: a create comes
// from the coordinator it names, one of its pinned members; a decision
// (epoch, takeover, seal, fail, abort, handover) from the node it names,
// whose term the shuffle then checks. A member cannot speak for another.
// A peer the network does not know as a member yet (from empty: its
// stream came before its gossip) is not checked here. The error wraps
// ErrAuthor.
func CheckAuthor(from string, c *Msg) error {
	if from == "" {
		return nil
	}
	var author string
	switch c.Op {
	case OpCreate:
		author = c.Coordinator
		if !slices.Contains(c.Members, from) {
			return fmt.Errorf("%w: shuffle %s: create from node %s, which is not among its members", ErrAuthor, c.Shuffle, from)
		}
	case OpEpoch, OpTakeover, OpSeal, OpFail, OpAbort, OpHandOver, OpHandedOver:
		author = c.Node
	default:
		return nil
	}
	if author != from {
		return fmt.Errorf("%w: shuffle %s: %s in the name of node %s, sent by node %s", ErrAuthor, c.Shuffle, c.Op, author, from)
	}
	return nil
}
