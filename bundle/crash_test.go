package bundle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) {
	// goleak also finds a Writer's flusher or compressor left running by a
	// Writer that was not closed.
	testkit.Main(m, &testkit.Options{Helpers: map[string]func() int{
		// The test binary re-executed as a recorder that is killed.
		"crash": func() int { return crashHelper(os.Args[len(os.Args)-1]) },
	}})
}

// crashHelper records forever, with a short flush interval and a lifecycle
// event now and then, the way a live recorder does.
func crashHelper(path string) int {
	w, err := Create(path, testHeader(), &WriterOptions{FlushInterval: 2 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	body := []byte(`{"_tag":"Chunk","requestId":"7","values":[{"type":"thread.message","text":"hello"}]}`)
	for i := 0; ; i++ {
		ev := Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text(body)}
		if i%100 == 0 {
			ev = Event{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"phase":"running"}`))}
			// Pace the recorder like live traffic: unpaced, the writer
			// outruns the test's reader, which then never reaches the end
			// of the growing file it is counting.
			time.Sleep(time.Millisecond)
		}
		if _, err := w.Append(&ev); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

// TestCrash kills a recording process and checks that everything it flushed
// is read back, with the cut reported.
func TestCrash(t *testing.T) {
	const atLeast = 2000
	path := filepath.Join(t.TempDir(), "crash.zst")
	cmd := testkit.HelperCommand("crash", path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			<-exited
		}
	}()

	// No event tells us the child has flushed enough, so poll the file.
	seen := 0
	deadline := time.Now().Add(60 * time.Second)
	for seen < atLeast {
		select {
		case err := <-exited:
			killed = true
			t.Fatalf("the recorder exited early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d events readable after a minute", seen)
		}
		if _, err := os.Stat(path); err == nil {
			seen = countReadableOrZero(path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed = true

	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	var ev Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next after %d events: %v", n, err)
		}
		n++
		if ev.Seq != uint64(n) {
			t.Fatalf("event %d has seq %d", n, ev.Seq)
		}
	}
	if n < seen {
		t.Errorf("read %d events after the kill, but %d were readable before it", n, seen)
	}
	if !r.Truncated() || r.Trailer() != nil {
		t.Errorf("Truncated() = %v, Trailer() = %v after a kill; want true, nil", r.Truncated(), r.Trailer())
	}
	// The frame being written when the recorder was killed had not ended:
	// its flushed blocks were read, and counted as unverified.
	if u := r.Unverified(); u == 0 || u > n {
		t.Errorf("Unverified() = %d of %d events after a kill; want some, at most all", u, n)
	}
	t.Logf("%d events survived; %s", n, r.TruncatedReason())
}

// countReadableOrZero counts the complete events of a bundle being written;
// a file whose header is not flushed yet counts as zero.
func countReadableOrZero(path string) int {
	r, err := Open(path, nil)
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	var ev Event
	for r.Next(&ev) == nil {
		n++
	}
	return n
}
