//go:build unix

package record

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestProcessGroupDiesWithSupervisor kills the supervising process with
// SIGKILL, so Stop never runs: the server and what it started must die anyway.
func TestProcessGroupDiesWithSupervisor(t *testing.T) {
	cmd := testkit.HelperCommand("supervisor")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var server, grandchild int
	sc := bufio.NewScanner(stdout)
	for server == 0 && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "grandchild" {
			grandchild, _ = strconv.Atoi(f[1])
		}
		if len(f) == 2 && f[0] == "server" {
			server, _ = strconv.Atoi(f[1])
		}
	}
	if server == 0 || grandchild == 0 {
		t.Fatalf("the supervisor reported server %d, grandchild %d", server, grandchild)
	}
	t.Cleanup(func() {
		syscall.Kill(server, syscall.SIGKILL)
		syscall.Kill(grandchild, syscall.SIGKILL)
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// They are not our children: there is no event for their death.
	waitFor(t, fmt.Sprintf("death of server %d after its supervisor's SIGKILL", server), func() bool { return !alive(server) })
	waitFor(t, fmt.Sprintf("death of grandchild %d in the server's process group", grandchild), func() bool { return !alive(grandchild) })
}
