package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientLinksNoEngine checks that a program that only calls a cluster
// does not link the engine: the client's dependencies hold no memberlist,
// libp2p or badger, and none of the node's own packages.
func TestClientLinksNoEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	banned := []string{"memberlist", "libp2p", "badger",
		"shufflenode/service", "shufflenode/dht", "shufflenode/spill", "shufflenode/api"}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if strings.Contains(dep, b) {
				t.Errorf("client depends on %s", dep)
			}
		}
	}
}
