package job

// Phases are the Arrow bytes a Parquet job moved and the seconds of its
// two phases: what the benchmark of record tabulates for it.
type Phases struct {
	ArrowBytes int64   // the input's rows as Arrow data, every side
	PutSecs    float64 // to the barrier: reading, putting (a set-index's sampling too)
	ReadSecs   float64 // after it: joining or sorting on the nodes, and writing the files
}

// Phases of a merge: both sides' shuffles, then the join.
func (r *MergeReport) Phases() Phases {
	return Phases{ArrowBytes: r.arrowBytes[0] + r.arrowBytes[1], PutSecs: r.shuffleSecs[0] + r.shuffleSecs[1], ReadSecs: r.joinSecs}
}

// Phases of a set-index: sampling the key column and the shuffle, then the
// sort.
func (r *SetIndexReport) Phases() Phases {
	return Phases{ArrowBytes: r.arrowBytes, PutSecs: r.plan.sampleSecs + r.shuffleSecs, ReadSecs: r.sortSecs}
}
