package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// bigMessage is the size of the largest WebSocket message the proxy records
// whole by default (record.DefaultMaxMessageSize).
const bigMessage = 64 << 20

// bigJSON returns a bigMessage-byte JSON text message, the shape of a large
// projection snapshot.
func bigJSON() []byte {
	item := []byte(`{"id":"thr_0123456789","title":"a background task","state":"running","messages":12},`)
	b := make([]byte, 0, bigMessage)
	b = append(b, `{"threads":[`...)
	for len(b)+len(item)+2 <= bigMessage {
		b = append(b, item...)
	}
	b = b[:len(b)-1]
	b = append(b, "]}"...)
	for len(b) < bigMessage {
		b = append(b, ' ')
	}
	return b
}

// wireproofBinary returns the wireproof command to run: $WIREPROOF_BIN (run.sh
// builds it once) or one built into a temp dir.
func wireproofBinary(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("WIREPROOF_BIN"); p != "" {
		return p
	}
	p := filepath.Join(b.TempDir(), "wireproof")
	cmd := exec.Command("go", "build", "-o", p, "../cmd/wireproof")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building wireproof: %v\n%s", err, out)
	}
	return p
}

// recordProcess is `wireproof record` running as its own process, so its
// memory is its own.
type recordProcess struct {
	cmd    *exec.Cmd
	URL    string
	stderr *bytes.Buffer // its banner and any error, shown only if it fails
}

func startRecordProcess(b *testing.B, upstream string) *recordProcess {
	b.Helper()
	cmd := exec.Command(wireproofBinary(b), "record", "--upstream", upstream, "-o", filepath.Join(b.TempDir(), "big.zst"))
	// Not the benchmark's own stderr: go test prints a benchmark's name and
	// its figures on one line, and the child's banner would land between them.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf("wireproof record printed no URL: %v\n%s", err, stderr.Bytes())
	}
	return &recordProcess{cmd: cmd, URL: strings.TrimSpace(line), stderr: &stderr}
}

// stop ends the recording (SIGTERM) and returns the process's peak resident
// memory, read from /proc before it exits.
func (p *recordProcess) stop(b *testing.B) int64 {
	b.Helper()
	peak := peakRSS(b, p.cmd.Process.Pid)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		b.Errorf("wireproof record: %v\n%s", err, p.stderr.Bytes())
	}
	return peak
}

// peakRSS reads VmHWM, the peak resident set size, of a process (Linux).
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("peak memory needs /proc: %v", err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}

// BenchmarkWSBig sends 64 MiB JSON messages one way, directly and through
// `wireproof record` running as its own process, which records each whole.
// The recorded run reports the proxy's peak memory as a multiple of the
// message size (peak-x).
func BenchmarkWSBig(b *testing.B) {
	sink := sinkServer()
	defer sink.Close()
	msg := bigJSON()
	run := func(b *testing.B, base string) { oneWay(b, base, [][]byte{msg}) }
	b.Run("direct", func(b *testing.B) { run(b, sink.URL) })
	b.Run("recorded", func(b *testing.B) {
		p := startRecordProcess(b, sink.URL)
		run(b, p.URL)
		peak := p.stop(b)
		b.ReportMetric(float64(peak)/float64(len(msg)), "peak-x")
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	})
}
