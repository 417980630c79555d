// Package synth writes synthetic inputs for trying and measuring
// shufflenode's jobs: Parquet tables (Parquet, for shuffle, merge and
// set-index; a key column with chosen type, cardinality, skew and nulls, an
// id, a value and an optional string tag) and Zarr v2 arrays (Zarr, for
// rechunk; each element holds its global C-order index, so a reader can
// check any element without the input).
//
// Both are deterministic from their config (a seed for Parquet), write
// their files and return; ZarrChunk builds one chunk of the array Zarr
// writes, for checks.
package synth
