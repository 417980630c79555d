package spill_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/shufflenode/shufflenode/spill"
)

// blob is a Value holding bytes.
type blob []byte

func (b blob) Size() int64                   { return int64(len(b)) }
func (b blob) MarshalSpill() ([]byte, error) { return b, nil }
func (b blob) Release()                      {}

func Example() {
	dir, err := os.MkdirTemp("", "spill-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := spill.DefaultConfig()
	cfg.Dir = filepath.Join(dir, "spill") // badger; "" would keep everything in memory
	cfg.MemoryLimit = 10                  // tiny: older pieces go to disk
	s, err := spill.Open(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	// Pieces arrive in any order, from any number of goroutines.
	for _, task := range []uint64{2, 0, 1} {
		k := spill.Key{Partition: 7, Task: task}
		if err := s.Put("shuffle-1", k, blob(fmt.Sprintf("task %d;", task))); err != nil {
			log.Fatal(err)
		}
	}
	// After the barrier, read partition 7 back in key order.
	err = s.Scan("shuffle-1", 7, func(k spill.Key, mem spill.Value, disk []byte) error {
		if mem != nil {
			disk = mem.(blob) // the caller knows its own Value type
		}
		fmt.Printf("%d %s %s\n", k.Task, where(mem), disk)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Partitions("shuffle-1"))
	if err := s.DropShuffle("shuffle-1"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 0 disk task 0;
	// 1 memory task 1;
	// 2 disk task 2;
	// [7]
}

func where(mem spill.Value) string {
	if mem != nil {
		return "memory"
	}
	return "disk"
}
