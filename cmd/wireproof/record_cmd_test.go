package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// recordClientPath is the path the "record-client" helper GETs.
const recordClientPath = "WIREPROOF_TEST_RECORD_CLIENT_PATH"

// recordClientEnv is the environment that makes this test binary, run by
// `wireproof record -- CMD`, the "record-client" helper with path.
func recordClientEnv(path string) []string {
	return append(testkit.HelperEnv("record-client"), recordClientPath+"="+path)
}

// recordClient is the command recorded by `wireproof record -- CMD`: it
// GETs a path through WIREPROOF_PROXY_URL, prints the body and exits with
// status 3.
func recordClient() int {
	res, err := http.Get(os.Getenv(proxyURLEnv) + os.Getenv(recordClientPath))
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	io.Copy(os.Stdout, res.Body)
	res.Body.Close()
	return 3
}

func recordedEvents(t *testing.T, path string) (bundle.Header, []bundle.Event) {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Truncated {
		t.Errorf("bundle truncated: %s", c.TruncatedReason)
	}
	return c.Header, c.Events
}

// exitStatus is the exit status of a finished wireproof child process; an
// error that is not an exit status (it could not run) fails the test.
func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		t.Fatalf("running wireproof: %v", err)
	}
	return ee.ExitCode()
}

type recordedRequest struct {
	Kind bundle.Kind
	URL  string
	Body string
}

func requestsOf(evs []bundle.Event) []recordedRequest {
	var out []recordedRequest
	for _, ev := range evs {
		switch ev.Kind {
		case bundle.KindHTTPRequest, bundle.KindHTTPBody:
			out = append(out, recordedRequest{ev.Kind, ev.URL, string(ev.Body.Data)})
		}
	}
	return out
}

func TestRecordCommand(t *testing.T) {
	bin := wireproofBin
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer upstream.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("runs a command and passes its status through", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run.zst")
		cmd := exec.Command(bin, "record", "--upstream", upstream.URL, "-o", out, "--redact", "s3cret-word", "--", self, "s3cret-word")
		cmd.Env = recordClientEnv("/hello")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if code := exitStatus(t, cmd.Run()); code != 3 {
			t.Fatalf("exit status %d, want the command's 3; stderr:\n%s", code, stderr.String())
		}
		// stdout is the command's alone; the proxy URL is in the banner.
		if got := stdout.String(); got != "hello from /hello" {
			t.Errorf("stdout = %q, want the command's output alone", got)
		}
		banner := regexp.MustCompile(`wireproof: recording http://127\.0\.0\.1:[0-9]+ -> ` + regexp.QuoteMeta(upstream.URL) + ` into ` + regexp.QuoteMeta(out))
		if !banner.MatchString(stderr.String()) {
			t.Errorf("stderr = %q, want it to match %s", stderr.String(), banner)
		}
		h, evs := recordedEvents(t, out)
		want := []recordedRequest{
			{Kind: bundle.KindHTTPRequest, URL: "/hello"},
			{Kind: bundle.KindHTTPBody, Body: "hello from /hello"},
		}
		if diff := cmp.Diff(want, requestsOf(evs)); diff != "" {
			t.Errorf("recorded requests (-want +got):\n%s", diff)
		}
		wantManifest := bundle.Manifest{
			Commands: [][]string{{self, "[REDACTED]"}},
			Options:  map[string]string{"upstream": upstream.URL, "listen": "127.0.0.1:0", "body-cap": "16777216", "redact": "1 secrets"},
		}
		if diff := cmp.Diff(wantManifest, h.Manifest); diff != "" {
			t.Errorf("manifest (-want +got):\n%s", diff)
		}
	})

	t.Run("--token-field adds a credential field", func(t *testing.T) {
		const value, argValue = "cust-cred-4455", "arg-cred-6677"
		login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"sessionSecret":%q,"note":"your secret is %s"}`, value, value)
		}))
		defer login.Close()
		out := filepath.Join(t.TempDir(), "run.zst")
		cmd := exec.Command(bin, "record", "--upstream", login.URL, "-o", out,
			"--token-field", "sessionSecret", "--token-field", "pin_code", "--", self, "PIN_CODE="+argValue)
		cmd.Env = recordClientEnv("/login")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if code := exitStatus(t, cmd.Run()); code != 3 {
			t.Fatalf("exit status %d, want the command's 3; stderr:\n%s", code, stderr.String())
		}
		if !strings.Contains(stdout.String(), value) {
			t.Fatalf("the client got %q through the proxy, want the credential unchanged", stdout.String())
		}
		h, evs := recordedEvents(t, out)
		if got, want := h.Manifest.Options["token-fields"], "sessionSecret,pin_code"; got != want {
			t.Errorf("manifest token-fields = %q, want %q", got, want)
		}
		if diff := cmp.Diff([][]string{{self, "PIN_CODE=[REDACTED]"}}, h.Manifest.Commands); diff != "" {
			t.Errorf("manifest commands (-want +got):\n%s", diff)
		}
		want := []recordedRequest{
			{Kind: bundle.KindHTTPRequest, URL: "/login"},
			{Kind: bundle.KindHTTPBody, Body: `{"sessionSecret":"[REDACTED]","note":"your secret is [REDACTED]"}`},
		}
		if diff := cmp.Diff(want, requestsOf(evs)); diff != "" {
			t.Errorf("recorded requests (-want +got):\n%s", diff)
		}
		raw := testkit.Decompress(t, out)
		for _, s := range []string{value, argValue} {
			if bytes.Contains(raw, []byte(s)) {
				t.Errorf("credential %q found in the decompressed bundle", s)
			}
		}
		code, _, errOut := runBin(t, "record", "--upstream", login.URL, "--token-field", "a b", "-o", filepath.Join(t.TempDir(), "x.zst"))
		if code != exitUsage || !strings.Contains(errOut, `--token-field "a b"`) {
			t.Errorf("record --token-field 'a b': exit %d, stderr %q: want a usage error naming the flag", code, errOut)
		}
	})

	t.Run("the upstream's userinfo password is in neither the banner nor the manifest", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run.zst")
		const pw = "upstream-pw-7788"
		withPW := strings.Replace(upstream.URL, "http://", "http://alice:"+pw+"@", 1)
		cmd := exec.Command(bin, "record", "--upstream", withPW, "-o", out, "--", self, withPW)
		cmd.Env = recordClientEnv("/hello")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if code := exitStatus(t, cmd.Run()); code != 3 {
			t.Fatalf("exit status %d, want the command's 3; stderr:\n%s", code, stderr.String())
		}
		redacted := strings.Replace(upstream.URL, "http://", "http://alice:[REDACTED]@", 1)
		if !strings.Contains(stderr.String(), " -> "+redacted+" into ") {
			t.Errorf("stderr = %q, want the upstream shown as %s", stderr.String(), redacted)
		}
		h, _ := recordedEvents(t, out)
		if got := h.Manifest.Options["upstream"]; got != redacted {
			t.Errorf("manifest upstream = %q, want %q", got, redacted)
		}
		for name, b := range map[string][]byte{"stderr": stderr.Bytes(), "stdout": stdout.Bytes(), "bundle": testkit.Decompress(t, out)} {
			if bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds the upstream's password", name)
			}
		}
		// A malformed URL's error does not show it either.
		code, _, errOut := runBin(t, "record", "--upstream", "ftp://bob:"+pw+"@127.0.0.1:1", "-o", filepath.Join(t.TempDir(), "x.zst"))
		if code != exitUsage || strings.Contains(errOut, pw) {
			t.Errorf("record with an ftp upstream: exit %d, stderr %q: want a usage error without the password", code, errOut)
		}
	})

	t.Run("records until SIGINT", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run.zst")
		cmd := exec.Command(bin, "record", "--upstream", upstream.URL, "-o", out)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		proxyURL, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("reading the proxy URL: %v; stderr:\n%s", err, stderr.String())
		}
		for _, p := range []string{"/a", "/b"} {
			res, err := http.Get(strings.TrimSpace(proxyURL) + p)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitStatus(t, cmd.Wait()); code != 0 {
			t.Fatalf("exit status %d after SIGINT, want 0; stderr:\n%s", code, stderr.String())
		}
		_, evs := recordedEvents(t, out)
		var got []string
		for _, r := range requestsOf(evs) {
			if r.Kind == bundle.KindHTTPRequest {
				got = append(got, r.URL)
			}
		}
		if diff := cmp.Diff([]string{"/a", "/b"}, got); diff != "" {
			t.Errorf("recorded requests (-want +got):\n%s", diff)
		}
	})

	existing := filepath.Join(t.TempDir(), "exists.zst")
	os.WriteFile(existing, []byte("x"), 0o600)
	for _, c := range []struct {
		name string
		args []string
		want string
		code int // 0: exitUsage
	}{
		{"no upstream", []string{"-o", "x.zst"}, "missing --upstream URL", 0},
		{"bad scheme", []string{"--upstream", "ftp://h", "-o", "x.zst"}, `--upstream "ftp://h": must be an http:// or https:// URL`, 0},
		{"no host", []string{"--upstream", "http://", "-o", "x.zst"}, "has no host", 0},
		{"no output", []string{"--upstream", upstream.URL}, "missing -o FILE", 0},
		{"existing output", []string{"--upstream", upstream.URL, "-o", existing}, "the file exists", exitOutput},
		{"bad body cap", []string{"--upstream", upstream.URL, "-o", "x.zst", "--body-cap", "lots"}, `invalid argument "lots"`, 0},
		{"command without --", []string{"--upstream", upstream.URL, "-o", "x.zst", "sh"}, `unexpected argument "sh"`, 0},
		{"bad listen", []string{"--upstream", upstream.URL, "-o", filepath.Join(t.TempDir(), "x.zst"), "--listen", "nowhere"}, "--listen nowhere", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"record"}, c.args...)...)
			cmd.Dir = t.TempDir()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			want := c.code
			if want == 0 {
				want = exitUsage
			}
			if code := exitStatus(t, cmd.Run()); code != want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, want, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), c.want)
			}
		})
	}
}

// stdioEcho is the "stdio-echo" helper: a JSON-RPC 2.0 server over NDJSON on
// stdio that answers every request line with a result line and exits at EOF.
func stdioEcho() int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			fmt.Println("not json")
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"echo":%q}}`+"\n", req.ID, req.Method)
	}
	return 0
}

// `record --stdio -- CMD` passes a stdio protocol through unchanged and
// records every line of it, both ways, with no proxy needed.
func TestRecordStdio(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdio.zst")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wireproofBin, "record", "--stdio", "-o", out, "--", self)
	cmd.Env = testkit.HelperEnv("stdio-echo")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"thread/start"}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wireproof record --stdio: %v\n%s", err, stderr.String())
	}
	wantOut := `{"jsonrpc":"2.0","id":1,"result":{"echo":"initialize"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"echo":"thread/start"}}` + "\n"
	if diff := cmp.Diff(wantOut, stdout.String()); diff != "" {
		t.Errorf("the command's stdout through wireproof (-want +got):\n%s", diff)
	}
	_, evs := recordedEvents(t, out)
	var got []string
	for _, ev := range evs {
		if ev.Kind == bundle.KindStdioLine {
			got = append(got, fmt.Sprintf("%s %s %s", ev.Conn, ev.Dir, ev.Body.Data))
		}
	}
	want := []string{
		`stdio c2s {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`stdio s2c {"jsonrpc":"2.0","id":1,"result":{"echo":"initialize"}}`,
		`stdio c2s {"jsonrpc":"2.0","id":2,"method":"thread/start"}`,
		`stdio s2c {"jsonrpc":"2.0","id":2,"result":{"echo":"thread/start"}}`,
	}
	// The two directions are recorded in the order they happened; a reply
	// never precedes its request, so compare each direction's order and the
	// total.
	if diff := cmp.Diff(filterPrefix(want, "stdio c2s"), filterPrefix(got, "stdio c2s")); diff != "" {
		t.Errorf("requests recorded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(filterPrefix(want, "stdio s2c"), filterPrefix(got, "stdio s2c")); diff != "" {
		t.Errorf("replies recorded (-want +got):\n%s", diff)
	}
}

func filterPrefix(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestRecordStdioNeedsACommand(t *testing.T) {
	cmd := exec.Command(wireproofBin, "record", "--stdio", "-o", filepath.Join(t.TempDir(), "x.zst"))
	out, err := cmd.CombinedOutput()
	if code := exitStatus(t, err); code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, out)
	}
	if !strings.Contains(string(out), "put the command after --") {
		t.Errorf("message does not say what is missing: %s", out)
	}
}

// TestRecordLearnedTokenOnArgv: a bootstrap token that stands on the
// recorded command line and is learned only later, from the command's
// traffic (subject_token), is neither in the manifest nor anywhere else in
// the closed bundle: the recorder redacts what came before
// it at close. A real curl through the proxy sends it.
func TestRecordLearnedTokenOnArgv(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
	}
	const token = "boot-tok-5e8a1c93d2"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer upstream.Close()
	out := filepath.Join(t.TempDir(), "run.zst")
	code, stdout, stderr := runBin(t, "record", "--upstream", upstream.URL, "-o", out, "--",
		"sh", "-c", `"$0" -s -d "grant_type=x&subject_token=$1" "$WIREPROOF_PROXY_URL/oauth/token"`, curl, token)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	raw := testkit.Decompress(t, out)
	if bytes.Contains(raw, []byte(token)) {
		t.Errorf("the token is in the bundle:\n%s", raw)
	}
	h, evs := recordedEvents(t, out)
	if argv := strings.Join(h.Manifest.Commands[0], " "); strings.Contains(argv, token) || !strings.Contains(argv, "[REDACTED]") {
		t.Errorf("manifest command %q", argv)
	}
	body := false
	for _, ev := range evs {
		if ev.Kind == bundle.KindHTTPBody && ev.Dir == bundle.DirClientToServer {
			body = bytes.Contains(ev.Body.Data, []byte("subject_token=[REDACTED]"))
		}
	}
	if !body {
		t.Error("the request body does not hold the redacted token: the test proves nothing")
	}
}
