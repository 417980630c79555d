package spec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/table"
)

// dataframeSpec is a valid hash-partitioned dataframe spec.
func dataframeSpec(t *testing.T, id string) *Spec {
	t.Helper()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{ID: id, Kind: Dataframe, Tasks: 4, Partitions: 8, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{table.GenSchema().Field(0).Name}}}
}

func TestValidateCoPartition(t *testing.T) {
	for _, tc := range []struct {
		name    string
		co      string
		wantErr string // "" for valid
	}{
		{"none", "", ""},
		{"another shuffle", "left-1", ""},
		{"itself", "right-1", "names the shuffle itself"},
		{"bad character", "left/1", "not in [A-Za-z0-9._-]"},
		{"too long", strings.Repeat("x", MaxIDLen+1), "must have 1..128 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := dataframeSpec(t, "right-1")
			sp.CoPartition = tc.co
			_, err := sp.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "right-1") {
				t.Fatalf("Validate: %v, want ErrInvalid naming right-1 and %q", err, tc.wantErr)
			}
		})
	}
}

// TestCoPartitionJSON checks the field's JSON name and that it is left out
// when empty (older nodes and clients see the same spec as before).
func TestCoPartitionJSON(t *testing.T) {
	sp := dataframeSpec(t, "r")
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "co_partition") {
		t.Errorf("empty co_partition marshalled: %s", b)
	}
	sp.CoPartition = "l"
	if b, err = json.Marshal(sp); err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"co_partition":"l"`) || back.CoPartition != "l" {
		t.Errorf("round trip of co_partition: %s -> %q", b, back.CoPartition)
	}
}

func TestSeed(t *testing.T) {
	for _, tc := range []struct{ name, id, seed, want string }{
		{"the ID by default", "a", "", "a"},
		{"the ownership seed when set", "a", "job", "job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &Spec{ID: tc.id, OwnershipSeed: tc.seed}
			if got := sp.Seed(); got != tc.want {
				t.Errorf("Seed() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRowsHint: the rows hint is optional (left out of the JSON when 0) and
// never negative.
func TestRowsHint(t *testing.T) {
	sp := dataframeSpec(t, "s")
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"rows"`) {
		t.Errorf("a spec without a rows hint marshals one: %s", b)
	}
	sp.Rows = 1 << 40
	if _, err := sp.Validate(); err != nil {
		t.Errorf("rows %d: %v", sp.Rows, err)
	}
	sp.Rows = -1
	if _, err := sp.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "rows = -1") || !strings.Contains(err.Error(), "shuffle s") {
		t.Errorf("rows -1: %v, want ErrInvalid naming the shuffle and the rows", err)
	}
}
