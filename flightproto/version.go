package flightproto

import "github.com/shufflenode/shufflenode/spec"

// ProtocolVersion is the version of the Flight protocol this code speaks
// (docs/flight-api.md). It is sent in the create request and reply, the
// members reply and Handshake. Within one version the protocol only grows:
// new actions, new optional request fields, new reply fields, new ticket
// kinds. Removing or renaming anything, changing a field's type or meaning,
// a status code's meaning, the hash rule or a limit downwards takes a new
// version.
const ProtocolVersion = 1

// ProtocolRevision numbers the fixes within ProtocolVersion: each time a
// node is changed to do what docs/flight-api.md says where it did not
// (its "Revisions" list), the revision goes up. It is sent in the members
// reply and Handshake, so that a client can tell an older node, whose
// differences the list gives. Revision 0 is a node that sends none.
const ProtocolRevision = 5

// CreateRequest is the body of the create action: a spec, and optionally
// the protocol version the client speaks (0: unstated). A node refuses a
// version it does not speak with Unimplemented.
type CreateRequest struct {
	*spec.Spec
	Version int `json:"version,omitempty"`
}

// CreateReply is the reply of the create action.
type CreateReply struct {
	Shuffle string `json:"shuffle"`
	// Coordinator is the name of the node that took the create.
	Coordinator string `json:"coordinator"`
	Version     int    `json:"version"`
}

// MembersReply is the reply of the members action: the live members as the
// answering node sees them.
type MembersReply struct {
	Version  int      `json:"version"`
	Revision int      `json:"revision"`
	Node     string   `json:"node"`
	Members  []Member `json:"members"`
}

// HandshakeReply is the payload of the Handshake response (its
// protocol_version field also carries Version).
type HandshakeReply struct {
	Version  int    `json:"version"`
	Revision int    `json:"revision"`
	Node     string `json:"node"`
	// Auth is AuthBearer when the node requires a bearer token on every
	// call (this Handshake's token was checked and is right); absent when
	// the node lets every caller in.
	Auth string `json:"auth,omitempty"`
}

// AuthBearer is HandshakeReply.Auth of a node that requires a bearer token.
const AuthBearer = "bearer"

// ActionInfo names one action and says what it does, for ListActions.
type ActionInfo struct {
	Type, Description string
}

// Actions lists every action a node takes, in the order ListActions gives.
func Actions() []ActionInfo {
	return []ActionInfo{
		{ActionCreate, "create a shuffle from its spec (JSON); the node becomes its coordinator; reply {shuffle, coordinator, version}"},
		{ActionBarrier, "body {shuffle}: wait until every task is in and sealed, or get the tasks to run again; reply {sealed, replay, epoch, replay_set}"},
		{ActionStatus, "body {shuffle}: this node's view of the shuffle (phase, tasks, tasks done, error)"},
		{ActionClose, "body {shuffle}: free the shuffle on every member"},
		{ActionMembers, "the live cluster members as this node sees them; reply {version, node, members}"},
		{ActionLayout, "body {shuffle}: a finished array rechunk's layout in the __partitioned__ form"},
		{ActionDrain, "drain this node and stop it, as SIGTERM does: new puts are refused (run them elsewhere), running ones finish; reply {node, draining}"},
	}
}
