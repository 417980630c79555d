package api

import "errors"

// ErrSecurity is wrapped by every error in a Security (a missing file, a
// certificate without its key).
var ErrSecurity = errors.New("api: invalid API security settings")
