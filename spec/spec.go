package spec

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/table"
)

// Kind is the kind of a shuffle.
type Kind string

const (
	// Dataframe shuffles route rows of Arrow record batches by a Rule.
	Dataframe Kind = "dataframe"
	// Array shuffles rechunk an n-d array: input task i is old chunk i and
	// output partition j new chunk j, both numbered in C order of the grid.
	Array Kind = "array"
)

// Limits on a spec, so one request cannot make every node allocate without
// bound.
const (
	MaxIDLen      = 128
	MaxTasks      = 1 << 24
	MaxPartitions = 1 << 22
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("spec: invalid shuffle spec")

// Spec is one shuffle as its client asked for it.
type Spec struct {
	// ID names the shuffle on every node: 1..128 of [A-Za-z0-9._-].
	ID string `json:"id"`
	// Kind is Dataframe or Array.
	Kind Kind `json:"kind"`
	// Tasks is the number of input tasks, named 0..Tasks-1.
	Tasks int `json:"tasks"`
	// Partitions is the number of output partitions, named 0..Partitions-1.
	Partitions int `json:"partitions"`
	// Rows, when the client knows it ahead (a Parquet footer says it), is
	// how many rows all tasks together will put into a dataframe shuffle.
	// It is a hint: receivers size each partition's first buffer for
	// Rows/Partitions rows, not from the first piece they see, which for a
	// task put in many batches is a fraction of its share. A wrong hint
	// costs memory or extra buffers, never rows. 0 means unknown.
	Rows int64 `json:"rows,omitempty"`
	// Schema is the Arrow IPC schema message of every input record batch.
	Schema []byte `json:"schema"`
	// Rule maps rows to output partitions.
	Rule table.Rule `json:"rule"`
	// DType is an array's NumPy dtype string ("<f8", "|u1", ...).
	DType string `json:"dtype,omitempty"`
	// OldChunks and NewChunks are an array's chunk sizes per axis.
	OldChunks Chunks `json:"old_chunks,omitempty"`
	NewChunks Chunks `json:"new_chunks,omitempty"`
	// OldDist and NewDist, when set (one entry per axis, nil for an axis of
	// consecutive chunks), say how an axis's indices are spread over its
	// chunks: block with padding, block-cyclic or unstructured (see
	// splitaxes.Dist and package dap). The chunk sizes are then each
	// chunk's buffer length along the axis.
	OldDist []*splitaxes.Dist `json:"old_dist,omitempty"`
	NewDist []*splitaxes.Dist `json:"new_dist,omitempty"`
	// OldLocations, for an array, names the node (member) each old chunk
	// is put from, one per task: owners of new chunks are then chosen to
	// keep the most bytes on their node (ownership.ByAffinity) instead of
	// dealt by hash. Not with CoPartition.
	OldLocations []string `json:"old_locations,omitempty"`
	// Replication is 1 (default; 0 means 1) or 2: with 2 every shard is
	// also written to a backup owner, and losing one node replays nothing.
	Replication int `json:"replication,omitempty"`
	// OwnershipSeed, when set, replaces ID as the seed of the ownership map:
	// two shuffles with the same seed and members are co-partitioned.
	OwnershipSeed string `json:"ownership_seed,omitempty"`
	// CoPartition, when set, names an existing shuffle (with the same
	// partition count and replication) whose ownership this one shares:
	// the node that creates this shuffle pins the other's members, nodes
	// lost so far and seed, so partition p of both lives on the same node
	// even if membership changed between the two creates. The creating node
	// must hold the other shuffle; OwnershipSeed, if set, must equal the
	// other's seed.
	CoPartition string `json:"co_partition,omitempty"`
	// OnDiffer says what a dataframe shuffle does when a replayed task
	// produces, for a partition that kept an earlier attempt's rows, other
	// rows (see OnDifferFail and OnDifferReplayWhole); "" means
	// OnDifferFail.
	OnDiffer string `json:"on_differ,omitempty"`
}

// The values of Spec.OnDiffer.
const (
	// OnDifferFail fails the shuffle with an error naming the shuffle, the
	// task and the partition (the default).
	OnDifferFail = "fail"
	// OnDifferReplayWhole makes every replay send its rows to every
	// partition, and a receiver that finds a replay differing from the
	// attempt it kept takes the replay's rows of that task for every
	// partition it holds in place of the kept attempt's: all the rows of
	// a task then come from one attempt. A replay costs its task's whole
	// data on the network instead of only the partitions that moved.
	OnDifferReplayWhole = "replay_whole"
)

// ReplayWhole reports whether a replay that differs replaces its task's
// earlier rows everywhere (OnDifferReplayWhole).
func (s *Spec) ReplayWhole() bool { return s.OnDiffer == OnDifferReplayWhole }

// Seed is the seed of the shuffle's ownership map.
func (s *Spec) Seed() string {
	if s.OwnershipSeed != "" {
		return s.OwnershipSeed
	}
	return s.ID
}

// ArrowSchema decodes Schema.
func (s *Spec) ArrowSchema() (*arrow.Schema, error) {
	sc, err := table.SchemaFromBytes(s.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: shuffle %s: schema: %w", ErrInvalid, s.ID, err)
	}
	return sc, nil
}

// Validate checks the spec and returns its decoded schema (nil for
// arrays). It plans an array (see Plan): a client checks its spec with it
// before it sends it.
func (s *Spec) Validate() (*arrow.Schema, error) { return s.validate(false) }

// Precheck is Validate without planning an array: every check that costs
// O(size of the spec), what a node runs on a spec from the network before
// it checks its caps (Runs among them) and plans it once. A spec that
// passes Precheck may still fail Plan.
func (s *Spec) Precheck() (*arrow.Schema, error) { return s.validate(true) }

func (s *Spec) validate(precheck bool) (*arrow.Schema, error) {
	if err := ValidateID(s.ID); err != nil {
		return nil, err
	}
	if err := s.validateCounts(); err != nil {
		return nil, err
	}
	if err := s.validateCoPartition(); err != nil {
		return nil, err
	}
	if err := s.validateLocations(); err != nil {
		return nil, err
	}
	if err := s.validateOnDiffer(); err != nil {
		return nil, err
	}
	switch s.Kind {
	case Array:
		return nil, s.validateArray(precheck)
	case Dataframe:
	default:
		return nil, fmt.Errorf("%w: shuffle %s: kind %q, want %q or %q", ErrInvalid, s.ID, s.Kind, Dataframe, Array)
	}
	sc, err := s.ArrowSchema()
	if err != nil {
		return nil, err
	}
	if err := s.Rule.Validate(sc, s.Partitions); err != nil {
		return nil, fmt.Errorf("%w: shuffle %s: %w", ErrInvalid, s.ID, err)
	}
	return sc, nil
}

func (s *Spec) validateCounts() error {
	switch {
	case s.Tasks < 1 || s.Tasks > MaxTasks:
		return fmt.Errorf("%w: shuffle %s: tasks = %d, want 1..%d", ErrInvalid, s.ID, s.Tasks, MaxTasks)
	case s.Partitions < 1 || s.Partitions > MaxPartitions:
		return fmt.Errorf("%w: shuffle %s: partitions = %d, want 1..%d", ErrInvalid, s.ID, s.Partitions, MaxPartitions)
	case s.Rows < 0:
		return fmt.Errorf("%w: shuffle %s: rows = %d, want 0 (unknown) or more", ErrInvalid, s.ID, s.Rows)
	case s.Replication < 0 || s.Replication > 2:
		return fmt.Errorf("%w: shuffle %s: replication = %d, want 1 or 2", ErrInvalid, s.ID, s.Replication)
	}
	return nil
}

// validateCoPartition checks the name of the shuffle to co-partition with
// (its existence and partition count are checked where it lives, at create).
func (s *Spec) validateCoPartition() error {
	if s.CoPartition == "" {
		return nil
	}
	if s.CoPartition == s.ID {
		return fmt.Errorf("%w: shuffle %s: co_partition names the shuffle itself", ErrInvalid, s.ID)
	}
	if err := ValidateID(s.CoPartition); err != nil {
		return fmt.Errorf("shuffle %s: co_partition: %w", s.ID, err)
	}
	return nil
}

// validateLocations checks OldLocations: an array's, one per task, not
// with co-partitioning (whose owners come from another shuffle).
func (s *Spec) validateLocations() error {
	switch {
	case s.OldLocations == nil:
		return nil
	case s.Kind != Array:
		return fmt.Errorf("%w: shuffle %s: old_locations is for arrays", ErrInvalid, s.ID)
	case len(s.OldLocations) != s.Tasks:
		return fmt.Errorf("%w: shuffle %s: %d old_locations for %d tasks", ErrInvalid, s.ID, len(s.OldLocations), s.Tasks)
	case s.CoPartition != "":
		return fmt.Errorf("%w: shuffle %s: old_locations and co_partition exclude each other", ErrInvalid, s.ID)
	}
	return nil
}

// validateOnDiffer checks OnDiffer: one of its values, replay_whole for
// dataframes only (an array's replayed pieces are compared byte for byte as
// they are placed, and a difference fails the shuffle).
func (s *Spec) validateOnDiffer() error {
	switch {
	case s.OnDiffer != "" && s.OnDiffer != OnDifferFail && s.OnDiffer != OnDifferReplayWhole:
		return fmt.Errorf("%w: shuffle %s: on_differ %q, want %q or %q", ErrInvalid, s.ID, s.OnDiffer, OnDifferFail, OnDifferReplayWhole)
	case s.ReplayWhole() && s.Kind != Dataframe:
		return fmt.Errorf("%w: shuffle %s: on_differ %q is for dataframes", ErrInvalid, s.ID, s.OnDiffer)
	}
	return nil
}

// Replicated reports whether every shard has a backup copy.
func (s *Spec) Replicated() bool { return s.Replication == 2 }

// ValidateID checks a shuffle ID.
func ValidateID(id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("%w: shuffle ID %q must have 1..%d characters", ErrInvalid, id, MaxIDLen)
	}
	for _, c := range id {
		ok := c == '.' || c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return fmt.Errorf("%w: shuffle ID %q: character %q not in [A-Za-z0-9._-]", ErrInvalid, id, c)
		}
	}
	return nil
}
