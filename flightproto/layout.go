package flightproto

// Layout is a finished rechunk in the form of the __partitioned__ protocol:
// the array's shape, its partition tiling (new chunks per axis) and, for
// every new chunk keyed by its grid position ("i,j"), where it starts, its
// shape, where it lives and the ticket that fetches it.
type Layout struct {
	Shape      []*int64             `json:"shape"` // null: unknown size
	Tiling     []int                `json:"partition_tiling"`
	Partitions map[string]Partition `json:"partitions"`
}

// Partition is one new chunk of a Layout.
type Partition struct {
	Start    []*int64 `json:"start"` // null past an unknown size
	Shape    []*int64 `json:"shape"`
	Location []string `json:"location"` // owner: [node name, API address]
	Data     Ticket   `json:"data"`
}
