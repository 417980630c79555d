package rechunk

// Config configures an Assembler. The zero value is the default.
type Config struct {
	// Alloc returns a buffer of exactly n bytes (n > 0) for a new chunk, or
	// nil if it cannot (over a memory budget, say): the piece that needed it
	// is then refused with ErrAlloc. The buffer need not be zeroed: the
	// pieces of a complete chunk write every byte. nil means make.
	Alloc func(n int) []byte
	// Keep is the owner of Alloc's memory, set as Keep on every chunk the
	// Assembler returns (see Chunk.Keep); nil when Alloc's buffers are Go
	// memory.
	Keep any
}

// DefaultConfig returns the default configuration.
func DefaultConfig() Config { return Config{} }

// Validate reports whether c is usable; every Config is.
func (c Config) Validate() error { return nil }

// alloc returns a buffer of n bytes: empty for 0, else from Alloc or make.
func (c Config) alloc(n int) []byte {
	switch {
	case n == 0:
		return []byte{}
	case c.Alloc == nil:
		return make([]byte, n)
	default:
		return c.Alloc(n)
	}
}
