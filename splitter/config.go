package splitter

import (
	"errors"
	"log/slog"
	"time"
)

// Config configures a Splitter. The zero value of a field means its default.
type Config struct {
	// BufferBytes is the size at which a destination buffer is sent.
	// Default 4 MiB.
	BufferBytes int64
	// MemoryLimit bounds the bytes buffered plus in flight on this node.
	// Default 256 MiB.
	MemoryLimit int64
	// MaxInFlight is the number of messages in flight per (shuffle,
	// destination). Default 2.
	MaxInFlight int
	// Linger is how long an end-of-task marker may wait in a destination's
	// buffer for other tasks' entries and markers while other tasks of the
	// shuffle are still being cut on this node (none: it goes at once).
	// Default 5 ms; negative: never wait.
	Linger time.Duration
	// RetryBase and RetryMax bound the exponential backoff between retries
	// of a failed send. Defaults 20 ms and 2 s.
	RetryBase, RetryMax time.Duration
	// MaxRetries is the number of retries of transport failures before a
	// queue fails. Busy replies do not count. Default 8.
	MaxRetries int
	// Logger receives send failures. Default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{
		BufferBytes: 4 << 20,
		MemoryLimit: 256 << 20,
		MaxInFlight: 2,
		Linger:      5 * time.Millisecond,
		RetryBase:   20 * time.Millisecond,
		RetryMax:    2 * time.Second,
		MaxRetries:  8,
		Logger:      slog.Default(),
	}
}

// withDefaults fills the zero fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.BufferBytes == 0 {
		c.BufferBytes = d.BufferBytes
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = d.MemoryLimit
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = d.MaxInFlight
	}
	if c.Linger == 0 {
		c.Linger = d.Linger
	}
	if c.RetryBase == 0 {
		c.RetryBase = d.RetryBase
	}
	if c.RetryMax == 0 {
		c.RetryMax = d.RetryMax
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = d.MaxRetries
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.BufferBytes < 0 || c.MemoryLimit < 0:
		return errors.New("splitter: negative BufferBytes or MemoryLimit")
	case c.MaxInFlight < 0 || c.MaxRetries < 0:
		return errors.New("splitter: negative MaxInFlight or MaxRetries")
	case c.RetryBase < 0 || c.RetryMax < c.RetryBase:
		return errors.New("splitter: RetryBase must be >= 0 and <= RetryMax")
	}
	return nil
}
