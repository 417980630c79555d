package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveWrite(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, other := filepath.Join(base, "out"), filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(root, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// a link inside the root that leads out of it, and one outside that leads in
	if err := os.Symlink(other, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(base, "in")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		roots []string
		path  string
		want  string // "" when refused
	}{
		{"in the root", []string{root}, filepath.Join(root, "part-0.parquet"), filepath.Join(root, "part-0.parquet")},
		{"under the root", []string{root}, filepath.Join(root, "sub", "p.parquet"), filepath.Join(root, "sub", "p.parquet")},
		{"the second root", []string{other, root}, filepath.Join(root, "p.parquet"), filepath.Join(root, "p.parquet")},
		{"a link into the root", []string{root}, filepath.Join(base, "in", "p.parquet"), filepath.Join(root, "sub", "p.parquet")},
		{"root /", []string{"/"}, filepath.Join(other, "p.parquet"), filepath.Join(other, "p.parquet")},
		{"no roots", nil, filepath.Join(root, "p.parquet"), ""},
		{"outside", []string{root}, filepath.Join(other, "p.parquet"), ""},
		{"a sibling sharing the prefix", []string{root}, filepath.Join(base, "outside", "p.parquet"), ""},
		{"a link out of the root", []string{root}, filepath.Join(root, "escape", "p.parquet"), ""},
		{"a directory that does not exist", []string{root}, filepath.Join(root, "nope", "p.parquet"), ""},
	}
	if err := os.MkdirAll(filepath.Join(base, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveWrite(tc.roots, "node-7", tc.path)
			if tc.want == "" {
				if !errors.Is(err, ErrWriteRefused) || !strings.Contains(err.Error(), "node-7") {
					t.Fatalf("got %q, %v; want ErrWriteRefused naming the node", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestOutputRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"relative/dir"}, {filepath.Join(dir, "missing")}, {file}} {
		if _, err := resolveRoots("output", bad); !errors.Is(err, ErrSecurity) {
			t.Errorf("roots %v: got %v, want ErrSecurity", bad, err)
		}
	}
	got, err := resolveRoots("output", []string{dir})
	if want, _ := filepath.EvalSymlinks(dir); err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("got %v, %v; want [%s]", got, err, want)
	}
}
