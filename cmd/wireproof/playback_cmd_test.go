package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/playback"
)

// startWireproof starts the wireproof binary with args and returns the URL it
// prints on its first stdout line.
func startWireproof(t *testing.T, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	return startWireproofEnv(t, nil, args...)
}

// startWireproofEnv is startWireproof with extra environment (NAME=VALUE) on
// top of the test's own.
func startWireproofEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(wireproofBin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("wireproof %s: reading its URL: %v; stderr:\n%s", args[0], err, stderr)
	}
	return cmd, strings.TrimSpace(line), stderr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestPlaybackCommand(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer upstream.Close()
	recorded := filepath.Join(t.TempDir(), "run.zst")
	rec, proxyURL, _ := startWireproof(t, "record", "--upstream", upstream.URL, "-o", recorded)
	for _, p := range []string{"/a", "/b"} {
		get(t, proxyURL+p)
	}
	rec.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, rec.Wait()); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	upstream.Close() // playback needs no server

	t.Run("everything played", func(t *testing.T) {
		cmd, url, stderr := startWireproof(t, "playback", recorded, "--strict", "--timing", "fast")
		for _, p := range []string{"/a", "/b"} {
			if code, body := get(t, url+p); code != 200 || body != "hello from "+p {
				t.Errorf("GET %s: %d %q, want the recorded answer", p, code, body)
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if code := exitStatus(t, cmd.Wait()); code != 0 {
			t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stderr.String(), "played 2, repeated 0, missed 0, never played 0") {
			t.Errorf("stderr lacks the report:\n%s", stderr)
		}
	})

	t.Run("strict with a miss and a request never played", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "played.zst")
		cmd, url, stderr := startWireproof(t, "playback", recorded, "--strict", "-o", out)
		get(t, url+"/a")
		if code, body := get(t, url+"/c"); code != http.StatusNotFound || !strings.Contains(body, "closest recorded") {
			t.Errorf("GET /c: %d %q, want 404 naming the closest recorded request", code, body)
		}
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitStatus(t, cmd.Wait()); code != exitPlaybackMissed {
			t.Errorf("exit %d, want %d; stderr:\n%s", code, exitPlaybackMissed, stderr)
		}
		for _, want := range []string{"miss: wireproof playback: no recorded http exchange matches GET /c", "never played: http seq", "GET /b"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		// The session is evidence like any other: its traffic, the miss
		// and the report are in the bundle.
		_, evs := recordedEvents(t, out)
		var urls []string
		var report playback.Report
		misses := 0
		for _, ev := range evs {
			switch {
			case ev.Kind == bundle.KindHTTPRequest:
				urls = append(urls, ev.URL)
			case ev.Kind == bundle.KindMark && ev.Name == playback.MarkMiss:
				misses++
			case ev.Kind == bundle.KindMark && ev.Name == playback.MarkReport:
				json.Unmarshal(ev.Body.Data, &report)
			}
		}
		if strings.Join(urls, " ") != "/a /c" || misses != 1 || report.Played != 1 || len(report.Unplayed) != 1 {
			t.Errorf("recorded session: requests %v, %d miss marks, report %+v; want /a /c, one miss, one played, one never played", urls, misses, report)
		}
	})

	t.Run("truncated bundle", func(t *testing.T) {
		// The recorder killed before its seal: what it holds is served,
		// and playback says it is truncated, as every reading verb does.
		b, err := os.ReadFile(recorded)
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(t.TempDir(), "cut.zst")
		if err := os.WriteFile(cut, b[:len(b)-57], 0o600); err != nil { // the seal: a checkpoint's 57 bytes
			t.Fatal(err)
		}
		cmd, url, stderr := startWireproof(t, "playback", cut, "--timing", "fast")
		if code, body := get(t, url+"/a"); code != 200 || body != "hello from /a" {
			t.Errorf("GET /a: %d %q, want the recorded answer", code, body)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if code := exitStatus(t, cmd.Wait()); code != 0 {
			t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if want := "wireproof: warning: " + cut + " is truncated: "; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	})

	existing := filepath.Join(t.TempDir(), "exists.zst")
	os.WriteFile(existing, []byte("x"), 0o600)
	abandoned := filepath.Join(t.TempDir(), "abandoned.zst")
	notBundle := filepath.Join(t.TempDir(), "not.zst")
	os.WriteFile(notBundle, []byte("not zstd"), 0o600)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad timing", []string{recorded, "--timing", "slow"}, exitUsage, `--timing: timing "slow"`},
		{"existing output", []string{recorded, "-o", existing}, exitOutput, "the file exists"},
		{"no bundle", []string{}, exitUsage, "accepts 1 arg"},
		{"missing bundle", []string{filepath.Join(t.TempDir(), "none.zst")}, exitUnreadable, "none.zst"},
		{"not a bundle", []string{notBundle}, exitUnreadable, "not.zst"},
		{"bad listen", []string{recorded, "--listen", "nowhere"}, exitUsage, "--listen nowhere"},
		{"unwritable output", []string{recorded, "-o", filepath.Join(t.TempDir(), "no", "dir", "out.zst")}, exitOutput, "cannot write"},
		{"bad listen with output", []string{recorded, "--listen", "nowhere", "-o", abandoned}, exitUsage, "--listen nowhere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(wireproofBin, append([]string{"playback"}, c.args...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if code := exitStatus(t, cmd.Run()); code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), c.want)
			}
		})
	}
	// A playback that never started leaves no -o bundle to block the next
	// attempt with "the file exists".
	if _, err := os.Lstat(abandoned); !os.IsNotExist(err) {
		t.Errorf("-o %s after a failed --listen: %v, want it removed", abandoned, err)
	}
}

// TestServersEndNormallyOnSignals: view and playback serve until stopped, so
// SIGINT and SIGTERM are their normal end: exit 0 after their summary, as
// exit.go and docs/cli.md say. playback --json prints its report on stdout after
// the URL, a request answered again counted as repeated.
func TestServersEndNormallyOnSignals(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer upstream.Close()
	recorded := filepath.Join(t.TempDir(), "run.zst")
	rec, proxyURL, _ := startWireproof(t, "record", "--upstream", upstream.URL, "-o", recorded)
	get(t, proxyURL+"/a")
	rec.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, rec.Wait()); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("playback "+sig.String(), func(t *testing.T) {
			cmd := exec.Command(wireproofBin, "playback", recorded, "--json", "--strict", "--timing", "fast")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(out)
			if !lines.Scan() {
				t.Fatalf("no URL; stderr:\n%s", &stderr)
			}
			url := lines.Text()
			for range 2 {
				if code, body := get(t, url+"/a"); code != 200 || body != "hello from /a" {
					t.Errorf("GET /a: %d %q", code, body)
				}
			}
			cmd.Process.Signal(sig)
			var report playback.Report
			if !lines.Scan() || json.Unmarshal(lines.Bytes(), &report) != nil {
				t.Fatalf("stdout after the URL: %q, want the report as JSON; stderr:\n%s", lines.Text(), &stderr)
			}
			if code := exitStatus(t, cmd.Wait()); code != 0 {
				t.Errorf("exit %d after %s, want 0; stderr:\n%s", code, sig, &stderr)
			}
			if report.Played != 1 || report.Repeated != 1 || report.Misses == nil || len(report.Misses) != 0 || len(report.Unplayed) != 0 {
				t.Errorf("report %+v: want 1 played, 1 repeated, no miss, nothing unplayed", report)
			}
			if !strings.Contains(stderr.String(), "played 1, repeated 1, missed 0, never played 0") {
				t.Errorf("stderr lacks the summary:\n%s", &stderr)
			}
		})
		t.Run("view "+sig.String(), func(t *testing.T) {
			cmd, _, stderr := startView(t, nil, recorded)
			cmd.Process.Signal(sig)
			if code := exitStatus(t, cmd.Wait()); code != 0 {
				t.Errorf("exit %d after %s, want 0; stderr:\n%s", code, sig, stderr)
			}
		})
	}
}
