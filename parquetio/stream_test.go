package parquetio

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestReader reads a file in batches: the same rows as ReadFile, the
// footer's count, and io.EOF at the end; a file cut short is an ErrRead
// naming it; CheckInputs gives each file's rows.
func TestReader(t *testing.T) {
	dir := t.TempDir()
	schema := allTypes()
	var paths []string
	for i, rows := range []int{2500, 0, 7} {
		rec := genRecord(memory.DefaultAllocator, schema, rows, uint64(i))
		path := filepath.Join(dir, []string{"a", "b", "c"}[i])
		if err := WriteFile(path, schema, []arrow.Record{rec}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		paths = append(paths, path)
	}
	in, err := CheckInputs(paths)
	if err != nil || len(in.FileRows) != 3 || in.FileRows[0] != 2500 || in.FileRows[1] != 0 || in.FileRows[2] != 7 {
		t.Fatalf("file rows %v, %v; want [2500 0 7]", in.FileRows, err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	r, err := Open(context.Background(), paths[0], mem, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadFile(context.Background(), paths[0], memory.DefaultAllocator, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(want)
	var batches int
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if batches >= len(want) || !array.RecordEqual(rec, want[batches]) {
			t.Fatalf("batch %d differs from ReadFile's", batches)
		}
		batches++
	}
	if r.Rows() != 2500 || batches != len(want) || batches != 3 {
		t.Errorf("rows %d, %d batches (ReadFile: %d); want 2500 rows in 3", r.Rows(), batches, len(want))
	}
	r.Close()
	mem.AssertSize(t, 0)

	b, _ := os.ReadFile(paths[0])
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), cut, nil, 0); !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), cut) {
		t.Fatalf("a file cut in half: %v; want ErrRead naming it", err)
	}
}
