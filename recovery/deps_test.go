package recovery

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPureCore checks that the core links no clock, network, storage or
// process package, nor any package of the project: time reaches it only as
// events.
func TestPureCore(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	banned := map[string]bool{"time": true, "os": true, "net": true, "syscall": true, "context": true}
	for _, dep := range strings.Fields(string(out)) {
		if banned[dep] || strings.HasPrefix(dep, "net/") || strings.HasPrefix(dep, "os/") ||
			(strings.Contains(dep, ".") && dep != "github.com/shufflenode/shufflenode/recovery") {
			t.Errorf("recovery depends on %s", dep)
		}
	}
}
