package flightproto

import (
	"github.com/apache/arrow/go/v15/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// MaxMessageBytes is the gRPC message limit on both sides (the default 4 MiB
// breaks larger batches).
const MaxMessageBytes = 256 << 20

// Dial connects a Flight client to a node's API address (host:port) with
// the message limits shufflenode needs. Close the client when done.
func Dial(addr string) (flight.Client, error) {
	return flight.NewClientWithMiddleware(addr, nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)))
}
