package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// t3HTML is a server for verify --server-cmd: it reads the bootstrap on fd
// 3, listens on its port, prints the ready line and answers every request
// 200 with an HTML page, which is not the JSON T3 answers.
func t3HTML() int {
	var boot t3.Bootstrap
	if err := json.NewDecoder(os.NewFile(3, "bootstrap")).Decode(&boot); err != nil {
		fmt.Fprintln(os.Stderr, "t3-html: bootstrap:", err)
		return 1
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(boot.Host, strconv.Itoa(boot.Port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "t3-html:", err)
		return 1
	}
	fmt.Println(t3.ReadyLogLine)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>not json</html>")
	}))
	return 0
}

// TestVerifyOwnMessagesReadable: the messages the driver's T3 client builds
// reach the verdict and the console as written, though a request's path
// (/oauth/token) ends in a token field's name, which the redactor learns
// the value after "token: " of.
func TestVerifyOwnMessagesReadable(t *testing.T) {
	// env HELPER-MODE... TEST-BINARY -test.run=^$, each word quoted for sh.
	words := append([]string{"env"}, testkit.HelperEnv("t3-html")[len(os.Environ()):]...)
	var htmlServer []string
	for _, w := range append(words, testkit.HelperArgv()...) {
		htmlServer = append(htmlServer, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	tests := []struct {
		name      string
		serverCmd string
		want      string // in the verdict's failure and on the console
	}{
		{"nothing listens: the proxy answers 502",
			`sh -c 'echo "` + t3.ReadyLogLine + `"; exec sleep 600' #`,
			"authentication failed: t3: POST /oauth/token answered HTTP 502: wireproof: upstream: "},
		{"an answer that is not JSON", strings.Join(htmlServer, " "),
			"authentication failed: t3: the answer to POST /oauth/token is not the JSON expected: invalid character '<' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runBin(t, "verify", "--scenario", "idle", "--timeout", "60s", "--server-cmd", tt.serverCmd, "--out", out)
			if code != exitCheckFailed {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitCheckFailed, stdout, stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, "idle-1.verdict.json"))
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Failure struct{ Check, Seen string }
			}
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if v.Failure.Check != "setup" || !strings.Contains(v.Failure.Seen, tt.want) || strings.Contains(v.Failure.Seen, "[REDACTED]") {
				t.Errorf("verdict's failure is %s: %q; want setup, readable, holding %q", v.Failure.Check, v.Failure.Seen, tt.want)
			}
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("console lacks %q:\n%s", tt.want, stdout)
			}
		})
	}
}
