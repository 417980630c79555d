package parquetio

import (
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
)

// Auto's choices shared among the files of one output (WriteConfig.PlanKey).
//
// A shuffle's output is a file per partition, and every partition holds
// rows of the same kind: hash partitioning spreads each column's values
// alike, range partitioning keeps their order and width. Sampling each
// file's first record (planColumns: a distinct count and a snappy encoding
// of every column's sample) cost a 1000-partition merge 5% of its CPU, to
// reach the same choices a thousand times. Writers that share a key take
// the plan of the last one that sampled, and every planReuse-th samples
// again, so a plan that stops fitting the rows is not kept for long.

// planReuse is how many Writers take a shared plan before one samples again.
const planReuse = 32

// planCacheSize bounds the shared plans kept: a node serves many jobs over
// its life, each its own key.
const planCacheSize = 256

// planKey is what makes Writers share a plan: the caller's key, and the
// schema and the settings a plan depends on.
type planKey struct {
	key    string
	schema string // arrow.Schema.Fingerprint
	comp   Compression
	noDict bool
}

// sharedPlan is a plan and how many Writers took it since it was sampled.
type sharedPlan struct {
	plans map[string]colPlan // read only
	uses  int
}

// planCache holds the shared plans by key.
var planCache = struct {
	sync.Mutex
	m map[planKey]*sharedPlan
}{m: make(map[planKey]*sharedPlan)}

// planFor returns the plans of a Writer's columns (see planColumns) from
// rec, its first record with rows (nil: none), taking a shared one where
// the config has a PlanKey.
func (w *Writer) planFor(rec arrow.Record) map[string]colPlan {
	if w.cfg.PlanKey == "" || w.cfg.Compression != Auto || rec == nil {
		return planColumns(w.schema, w.cfg.Compression, w.cfg.NoDictionary, rec)
	}
	k := planKey{key: w.cfg.PlanKey, schema: w.schema.Fingerprint(), comp: w.cfg.Compression, noDict: w.cfg.NoDictionary}
	if plans := takePlan(k); plans != nil {
		return plans
	}
	plans := planColumns(w.schema, w.cfg.Compression, w.cfg.NoDictionary, rec)
	if rec.NumRows() >= autoSampleValues {
		putPlan(k, plans) // a smaller first record says too little of the rest
	}
	return plans
}

// takePlan returns the shared plan of k, or nil when there is none or it
// was taken planReuse times (the caller then samples).
func takePlan(k planKey) map[string]colPlan {
	planCache.Lock()
	defer planCache.Unlock()
	p := planCache.m[k]
	if p == nil || p.uses >= planReuse {
		return nil
	}
	p.uses++
	return p.plans
}

// putPlan shares plans under k, in place of any before, dropping another
// key's plan if the cache is full.
func putPlan(k planKey, plans map[string]colPlan) {
	planCache.Lock()
	defer planCache.Unlock()
	if _, ok := planCache.m[k]; !ok && len(planCache.m) >= planCacheSize {
		for old := range planCache.m {
			delete(planCache.m, old)
			break
		}
	}
	planCache.m[k] = &sharedPlan{plans: plans}
}
