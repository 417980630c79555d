package ownership

import "errors"

// Sentinel errors of this package, wrapped with %w and the member or value
// concerned; match them with errors.Is.
var (
	// ErrNoMembers: a map needs at least one member (New with none, or
	// Without removing every member).
	ErrNoMembers = errors.New("ownership: no members")
	// ErrDuplicateMember: a member name appears twice.
	ErrDuplicateMember = errors.New("ownership: duplicate member")
	// ErrEmptyMember: a member name is empty.
	ErrEmptyMember = errors.New("ownership: empty member name")
	// ErrPartitions: the partition count is negative.
	ErrPartitions = errors.New("ownership: invalid partition count")
	// ErrUnknownMember: Without names a node that is not a member of the map.
	ErrUnknownMember = errors.New("ownership: unknown member")
	// ErrNothingLost: Without was called without any member to remove.
	ErrNothingLost = errors.New("ownership: no member to remove")
)
