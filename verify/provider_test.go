package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/verify"
)

// providerChannels sums up the provider processes a bundle recorded.
type providerChannel struct {
	argv     []string
	pid      int
	in, out  int
	exited   bool
	exitCode int
}

func providerChannels(t *testing.T, events []bundle.Event) map[string]*providerChannel {
	t.Helper()
	chans := map[string]*providerChannel{}
	for _, ev := range events {
		if !strings.HasPrefix(ev.Conn, "provider-") {
			continue
		}
		c := chans[ev.Conn]
		if c == nil {
			c = &providerChannel{}
			chans[ev.Conn] = c
		}
		switch ev.Kind {
		case bundle.KindProcStart:
			var a struct {
				Argv []string `json:"argv"`
				Pid  int      `json:"pid"`
			}
			if err := json.Unmarshal(ev.Attrs, &a); err != nil {
				t.Fatalf("%s proc.start attrs: %v", ev.Conn, err)
			}
			c.argv, c.pid = a.Argv, a.Pid
		case bundle.KindStdioLine:
			if ev.Dir == bundle.DirClientToServer {
				c.in++
			} else {
				c.out++
			}
		case bundle.KindProcExit:
			c.exited, c.exitCode = true, ev.Code
		}
	}
	return chans
}

// logged reports whether a proc.log line of the bundle holds every one of
// words.
func logged(events []bundle.Event, words ...string) bool {
	for _, ev := range events {
		if ev.Kind != bundle.KindProcLog {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(string(ev.Body.Data), w)
		}
		if all {
			return true
		}
	}
	return false
}

// TestProviderEvidence: every scenario runs on provider processes, and the
// bundle holds each one's argv (its MCP bearer token redacted: runOnce
// searches the bundle for it), its stdio both ways and its exit, and the
// provider's MCP requests to the server through the recording proxy.
func TestProviderEvidence(t *testing.T) {
	want := map[assert.Scenario]int{assert.ScenarioIdle: 2, assert.ScenarioActive: 2, assert.ScenarioNative: 1, assert.ScenarioNested: 3}
	for _, sc := range verify.Scenarios {
		t.Run(string(sc), func(t *testing.T) {
			res := runOnce(t, verify.Options{Scenario: sc})
			if res.Verdict.Status != assert.StatusPassed {
				t.Fatalf("verdict %+v", res.Verdict)
			}
			_, events := readBundle(t, res.Bundle)
			chans := providerChannels(t, events)
			if len(chans) != want[sc] {
				t.Errorf("%d provider processes recorded, want %d", len(chans), want[sc])
			}
			for name, c := range chans {
				if len(c.argv) < 3 || c.argv[1] != "provider" || c.argv[2] != "claude" || !strings.Contains(strings.Join(c.argv, " "), "--mcp-config") {
					t.Errorf("%s argv %q", name, c.argv)
				}
				if !strings.Contains(strings.Join(c.argv, " "), "[REDACTED]") {
					t.Errorf("%s argv does not show its bearer token redacted: %q", name, c.argv)
				}
				if c.in == 0 || c.out == 0 || !c.exited || c.exitCode != 0 {
					t.Errorf("%s: %d stdin and %d stdout lines, exited %v with %d", name, c.in, c.out, c.exited, c.exitCode)
				}
				if testkit.ProcessExists(c.pid) {
					t.Errorf("%s (pid %d) is still running", name, c.pid)
				}
			}
			mcp := 0
			for _, ev := range events {
				if ev.Kind == bundle.KindHTTPRequest && ev.Method == "POST" && strings.HasPrefix(ev.URL, "/mcp") {
					mcp++
				}
			}
			if sc != "native" && mcp == 0 {
				t.Error("no MCP request of a provider went through the recording proxy")
			}
		})
	}
}

// TestScriptedProvider runs a server given as --server-cmd with
// --scripted-provider: the server finds `claude` through the binaryPath
// setting written into its home (where Codex is disabled, so a real server
// does not start the user's own), and the run passes on the scripted
// provider.
func TestScriptedProvider(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", ServerCmd: wireproofBin + " fixture", ScriptedProvider: true, KeepWorkspace: true})
	if res.Verdict.Status != assert.StatusPassed {
		t.Fatalf("verdict %+v", res.Verdict)
	}
	b, err := os.ReadFile(filepath.Join(res.Workspace, "home", "userdata", "settings.json"))
	want := map[string]any{"providers": map[string]any{
		"claudeAgent": map[string]any{"binaryPath": filepath.Join(res.Workspace, "bin", "claude")},
		"codex":       map[string]any{"enabled": false},
	}}
	var got map[string]any
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("settings: %v\n%s", err, b)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server's settings (-want +got):\n%s", diff)
	}
	hdr, events := readBundle(t, res.Bundle)
	if o := hdr.Manifest.Options; o["scriptedProvider"] != "true" || o[assert.OptionProviderDriver] != verify.DriverClaude {
		t.Errorf("manifest options %v do not record the scripted provider and its driver, %s", o, verify.DriverClaude)
	}
	if !logged(events, "claudeAgent provider from settings", "/bin/claude") {
		t.Error("the server did not start its provider from the binaryPath setting")
	}
	if n := len(providerChannels(t, events)); n != 2 {
		t.Errorf("%d provider processes recorded, want 2", n)
	}
}
