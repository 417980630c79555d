// Package node assembles one shufflenode process: the cluster layer
// (dht.Node: memberlist, libp2p, kad-dht), the shuffle engine
// (service.Service) and the client API (api.Server, Arrow Flight).
//
// Start runs one node; StartLocal runs n nodes in this process on
// 127.0.0.1, joined into one cluster, for the demo and for tests.
package node
