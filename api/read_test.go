package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readTree makes base/in (the root) with in/a.parquet and in/sub/b.parquet,
// base/other/c.parquet, a link in the root to other's file, and a link
// outside the root to a file in it.
func readTree(t *testing.T) (base, root string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "in")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(base, "other"), filepath.Join(base, "inside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"in/a.parquet", "in/sub/b.parquet", "other/c.parquet", "inside/d.parquet"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"in/escape.parquet": "other/c.parquet", "linked.parquet": "in/sub/b.parquet"}
	for link, target := range links {
		if err := os.Symlink(filepath.Join(base, target), filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	return base, root
}

// TestResolveRead: a node reads only files under its input roots, with
// symlinks resolved; every refusal names the node.
func TestResolveRead(t *testing.T) {
	base, root := readTree(t)
	cases := []struct {
		name  string
		roots []string
		path  string
		want  string // "" when refused
	}{
		{"in the root", []string{root}, filepath.Join(root, "a.parquet"), filepath.Join(root, "a.parquet")},
		{"under the root", []string{root}, filepath.Join(root, "sub", "b.parquet"), filepath.Join(root, "sub", "b.parquet")},
		{"the second root", []string{filepath.Join(base, "other"), root}, filepath.Join(root, "a.parquet"), filepath.Join(root, "a.parquet")},
		{"a link into the root", []string{root}, filepath.Join(base, "linked.parquet"), filepath.Join(root, "sub", "b.parquet")},
		{"no roots", nil, filepath.Join(root, "a.parquet"), ""},
		{"outside", []string{root}, filepath.Join(base, "other", "c.parquet"), ""},
		{"a sibling sharing the prefix", []string{root}, filepath.Join(base, "inside", "d.parquet"), ""},
		{"a link out of the root", []string{root}, filepath.Join(root, "escape.parquet"), ""},
		{"a file that does not exist", []string{root}, filepath.Join(root, "nope.parquet"), ""},
		{"relative", []string{root}, "in/a.parquet", ""},
		{"not clean", []string{root}, root + "/sub/../a.parquet", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveRead(tc.roots, "node-7", tc.path)
			if tc.want == "" {
				if !errors.Is(err, ErrReadRefused) || got != "" {
					t.Fatalf("got %q, %v; want ErrReadRefused", got, err)
				}
				if tc.roots != nil && filepath.IsAbs(tc.path) && filepath.Clean(tc.path) == tc.path && !strings.Contains(err.Error(), "node-7") {
					t.Errorf("%v does not name the node", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzResolveRead: whatever path a put names, the node either refuses it
// or reads a file under its root.
func FuzzResolveRead(f *testing.F) {
	for _, s := range []string{"/a.parquet", "in/a.parquet", "/../in/a.parquet", "//in//a.parquet", "/in/escape.parquet", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		base, root := readTree(t)
		if strings.HasPrefix(path, "/") {
			path = base + path
		}
		got, err := resolveRead([]string{root}, "node-1", path)
		if err != nil {
			if !errors.Is(err, ErrReadRefused) {
				t.Fatalf("%q: %v, not ErrReadRefused", path, err)
			}
			return
		}
		if !under(filepath.Dir(got), root) {
			t.Fatalf("%q resolved to %q, outside the root %s", path, got, root)
		}
		if real, err := filepath.EvalSymlinks(got); err != nil || real != got {
			t.Fatalf("%q resolved to %q, which resolves further to %q (%v)", path, got, real, err)
		}
	})
}
