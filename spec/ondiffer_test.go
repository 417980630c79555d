package spec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestValidateOnDiffer: on_differ is absent, "fail" or "replay_whole", and
// replay_whole is for dataframes; it survives a JSON round trip.
func TestValidateOnDiffer(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		array       bool
		wantErr     string
	}{
		{name: "absent"},
		{name: "fail", value: OnDifferFail},
		{name: "replay whole", value: OnDifferReplayWhole},
		{name: "unknown", value: "retry", wantErr: `on_differ "retry"`},
		{name: "replay whole of an array", value: OnDifferReplayWhole, array: true, wantErr: "is for dataframes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := dataframeSpec(t, "d")
			if tc.array {
				sp = &Spec{ID: "d", Kind: Array, Tasks: 2, Partitions: 1, DType: "<f8",
					OldChunks: Chunks{{2, 2}}, NewChunks: Chunks{{4}}}
			}
			sp.OnDiffer = tc.value
			b, err := json.Marshal(sp)
			if err != nil {
				t.Fatal(err)
			}
			var back Spec
			if err := json.Unmarshal(b, &back); err != nil || back.OnDiffer != tc.value {
				t.Fatalf("round trip of on_differ %q: %s -> %q, %v", tc.value, b, back.OnDiffer, err)
			}
			_, err = back.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if back.ReplayWhole() != (tc.value == OnDifferReplayWhole) {
					t.Errorf("ReplayWhole() = %t for %q", back.ReplayWhole(), tc.value)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "shuffle d") {
				t.Fatalf("Validate: %v, want ErrInvalid naming shuffle d and %q", err, tc.wantErr)
			}
		})
	}
}
