// Package offheap hands out byte buffers from memory mapped outside the Go
// heap, for data that is large, long-lived and free of pointers: a
// receiver's accumulated output partitions. Such memory costs the garbage
// collector nothing: it is not scanned, and it does not count toward the
// heap goal, so a node holding hundreds of megabytes of shuffle output does
// not also let twice that much garbage pile up before each collection, as
// it would if the output were on the heap (GOGC=100). On Linux the regions
// are advised as transparent huge pages, so filling them takes a few
// hundred page faults instead of one per 4 KiB.
//
// An Arena frees its mappings when it becomes unreachable (a runtime
// cleanup), so a holder of its memory must also hold the Arena. Buffers are
// never freed one by one: an Arena lives as long as the shuffle it serves.
// An Arena made with NewIn gives its regions to a Pool instead, which keeps
// them (up to a limit, for an idle time) for the next Arenas of the same
// owner: a node's later shuffles reuse memory already mapped and touched.
package offheap
