package flightproto

import "errors"

// ErrMalformed is wrapped by every error of a Reader about the bytes it was
// sent (a schema message it does not take, a batch that does not decode),
// as opposed to the stream's own errors (a cut connection, a cancelled
// call). A server answers it with InvalidArgument.
var ErrMalformed = errors.New("flightproto: malformed Flight message")
