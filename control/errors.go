package control

import "errors"

// ErrBadMsg: a control message body is not valid JSON, too large, or names
// no valid shuffle. Decode wraps it with what is wrong.
var ErrBadMsg = errors.New("control: bad control message")
