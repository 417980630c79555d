package held

// maxTombstones bounds how many dropped shuffles a node remembers.
const maxTombstones = 1024

// tombstones remember why the most recently dropped shuffles are gone, so
// that a late call gets "closed" or "expired" rather than only "unknown".
// Not safe for concurrent use: the Table's lock guards it.
type tombstones struct {
	reason map[string]string
	left   map[string]bool // shuffles that went on without this node
	order  []string        // oldest first
}

func (t *tombstones) add(id, reason string) {
	if t.reason == nil {
		t.reason = map[string]string{}
	}
	if _, ok := t.reason[id]; !ok {
		t.order = append(t.order, id)
	}
	t.reason[id] = reason
	if len(t.order) > maxTombstones {
		delete(t.reason, t.order[0])
		delete(t.left, t.order[0])
		t.order = t.order[1:]
	}
}

// addLeft is add for a shuffle that goes on without this node (an epoch
// move declared it lost): a call about it belongs to another node.
func (t *tombstones) addLeft(id, reason string) {
	t.add(id, reason)
	if t.left == nil {
		t.left = map[string]bool{}
	}
	t.left[id] = true
}
