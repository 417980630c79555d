package parquetio

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
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

// PlanCache holds the plans that Writers with a PlanKey share (see
// WriteConfig.PlanKey and Plans). Its owner decides the scope of sharing: a
// node's API server keeps one for the files it writes, a client's job one
// for its own. It keeps at most 256 plans. Safe for concurrent use.
type PlanCache struct {
	mu sync.Mutex
	m  map[planKey]*sharedPlan
}

// NewPlanCache returns an empty cache.
func NewPlanCache() *PlanCache {
	return &PlanCache{m: make(map[planKey]*sharedPlan)}
}

// planFor returns the plans of a Writer's columns (see planColumns) from
// rec, its first record with rows (nil: none), taking a shared one where
// the config has a PlanKey and a cache.
func (w *Writer) planFor(rec arrow.Record) map[string]colPlan {
	c := w.cfg.Plans
	if c == nil || w.cfg.PlanKey == "" || w.cfg.Compression != Auto || rec == nil {
		return planColumns(w.schema, w.cfg.Compression, w.cfg.NoDictionary, rec)
	}
	k := planKey{key: w.cfg.PlanKey, schema: w.schema.Fingerprint(), comp: w.cfg.Compression, noDict: w.cfg.NoDictionary}
	if plans := c.take(k); plans != nil {
		return plans
	}
	plans := planColumns(w.schema, w.cfg.Compression, w.cfg.NoDictionary, rec)
	if rec.NumRows() >= autoSampleValues {
		c.put(k, plans) // a smaller first record says too little of the rest
	}
	return plans
}

// take returns the shared plan of k, or nil when there is none or it was
// taken planReuse times (the caller then samples).
func (c *PlanCache) take(k planKey) map[string]colPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.m[k]
	if p == nil || p.uses >= planReuse {
		return nil
	}
	p.uses++
	return p.plans
}

// put shares plans under k, in place of any before, dropping another key's
// plan if the cache is full.
func (c *PlanCache) put(k planKey, plans map[string]colPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= planCacheSize {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = &sharedPlan{plans: plans}
}
