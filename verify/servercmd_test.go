package verify_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/verify"
)

// TestServerCmdThatCannotBeExecdIsAnOptionError: a --server-cmd that sh
// cannot exec as the server itself (found running a real T3 checkout with
// "cd /t3code && node apps/server/src/bin.ts", which died with "exec: cd: not
// found") is refused before anything starts, naming the flag and the reason,
// and leaves no bundle behind.
func TestServerCmdThatCannotBeExecdIsAnOptionError(t *testing.T) {
	tests := []struct {
		cmd, says string
	}{
		{"cd /tmp/t3code && node apps/server/src/bin.ts", `"&&"`},
		{"cd /tmp/t3code", "starts with cd"},
		{"node a.ts; echo done", `";"`},
		{"node a.ts | tee log", `"|"`},
		{"node a.ts &", `"&"`},
		{"node a.ts\nnode b.ts", `"\n"`},
		{"T3CODE_HOME=/x node a.ts", `assignment "T3CODE_HOME=/x"`},
	}
	for _, tt := range tests {
		out := filepath.Join(t.TempDir(), "out")
		_, err := verify.Run(context.Background(), verify.Options{Scenario: "idle", ServerCmd: tt.cmd, OutDir: out})
		var oe *verify.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("%q: err = %v, want an *OptionError", tt.cmd, err)
			continue
		}
		if oe.Option != "--server-cmd" || !strings.Contains(oe.Error(), tt.says) || !strings.Contains(oe.Error(), "absolute paths") {
			t.Errorf("%q: %v; want it to name --server-cmd, %s and the way out", tt.cmd, err, tt.says)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: the output directory was created before the options were checked (%v)", tt.cmd, err)
		}
	}
}
