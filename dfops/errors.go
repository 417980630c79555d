package dfops

import "errors"

// Sentinel errors of package dfops. Errors wrap one of these with %w and name
// the column (and side) concerned; match them with errors.Is.
var (
	// ErrKeyType means two key columns have types that cannot be compared
	// (string and int64, for example), or a key column has a type that cannot
	// be a key.
	ErrKeyType = errors.New("dfops: incompatible key column types")
	// ErrColumn means a column named by the caller does not exist, is named
	// twice, or the join's output would have two columns of one name.
	ErrColumn = errors.New("dfops: bad column")
	// ErrSpec means a JoinSpec is invalid (unknown How, key lists of
	// different lengths, no keys).
	ErrSpec = errors.New("dfops: invalid join spec")
	// ErrTooLarge means a record has more rows than one join or sort handles
	// (2^31-1).
	ErrTooLarge = errors.New("dfops: record too large")
	// ErrUnsupportedType means a column has a type this package cannot sort,
	// sample or cast.
	ErrUnsupportedType = errors.New("dfops: unsupported column type")
)
