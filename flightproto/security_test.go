package flightproto

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadTokens: a token file holds one token per line, white space and
// empty lines left out; a client sends the first; an empty file or a
// missing one is an ErrAuthConfig naming the file.
func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"one", "s3cret\n", []string{"s3cret"}},
		{"no newline", "  s3cret ", []string{"s3cret"}},
		{"two, with blanks", "\nold\r\n\n  new \n", []string{"old", "new"}},
		{"empty", " \n\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTokens(path)
			first, ferr := ReadToken(path)
			if tc.want == nil {
				if !errors.Is(err, ErrAuthConfig) || !errors.Is(ferr, ErrAuthConfig) {
					t.Fatalf("ReadTokens: %v, ReadToken: %v; want ErrAuthConfig", err, ferr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || ferr != nil || first != tc.want[0] {
				t.Fatalf("ReadTokens %q, %v; ReadToken %q, %v; want %q", got, err, first, ferr, tc.want)
			}
		})
	}
	if _, err := ReadTokens(filepath.Join(dir, "missing")); !errors.Is(err, ErrAuthConfig) {
		t.Fatalf("missing file: %v, want ErrAuthConfig", err)
	}
}
