package record

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// seqCollector is a subscriber that keeps the seqs it saw, optionally failing
// or panicking at one of them.
type seqCollector struct {
	mu      sync.Mutex
	seqs    []uint64
	failAt  uint64
	panicAt uint64
}

func (c *seqCollector) Event(ev *bundle.Event) error {
	if ev.Seq == c.panicAt {
		panic("boom")
	}
	if ev.Seq == c.failAt {
		return errors.New("refused")
	}
	c.mu.Lock()
	c.seqs = append(c.seqs, ev.Seq)
	c.mu.Unlock()
	return nil
}

func (c *seqCollector) got() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uint64(nil), c.seqs...)
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// newFileRecorder returns a Recorder writing a real bundle in a temp dir.
func newFileRecorder(t *testing.T, opts *Options) (*Recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(w, opts), path
}

// readBundle reads every event of a bundle (header excluded), detached.
func readBundle(t *testing.T, path string) []bundle.Event {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if c.Truncated {
		t.Fatalf("bundle %s truncated: %s", path, c.TruncatedReason)
	}
	return c.Events
}

func TestRecorderOrder(t *testing.T) {
	testkit.CheckLeaks(t)
	rec, path := newFileRecorder(t, nil)
	subs := []*seqCollector{{}, {}, {}}
	for i, s := range subs {
		rec.Subscribe(fmt.Sprintf("sub%d", i), s)
	}
	const producers, each = 4, 250
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindMark, Name: fmt.Sprintf("p%d-%d", p, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	want := seqRange(1, producers*each)
	for i, s := range subs {
		if diff := cmp.Diff(want, s.got()); diff != "" {
			t.Errorf("subscriber %d seqs (-want +got):\n%s", i, diff)
		}
	}
	var got []uint64
	for _, ev := range readBundle(t, path) {
		got = append(got, ev.Seq)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle seqs (-want +got):\n%s", diff)
	}
}

func TestRecorderCutsOffFailingSubscribers(t *testing.T) {
	testkit.CheckLeaks(t)
	rec, path := newFileRecorder(t, nil)
	good, failing, panicking := &seqCollector{}, &seqCollector{failAt: 10}, &seqCollector{panicAt: 20}
	rec.Subscribe("good", good)
	rec.Subscribe("failing", failing)
	rec.Subscribe("panicking", panicking)
	for range 50 {
		if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindMark, Name: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	err := rec.Close()
	if err == nil {
		t.Fatal("Close returned nil; want the cut-off subscribers reported")
	}
	for _, name := range []string{`"failing" failed at seq 10: refused`, `"panicking" panicked at seq 20: boom`} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("Close error %q does not mention %s", err, name)
		}
	}
	var subErrs []SubscriberError
	for _, e := range rec.SubscriberErrors() {
		var se *SubscriberError
		if !errors.As(e, &se) {
			t.Fatalf("SubscriberErrors holds %T, want *SubscriberError", e)
		}
		c := *se
		c.Err = nil
		subErrs = append(subErrs, c)
	}
	wantErrs := []SubscriberError{{Name: "failing", Seq: 10}, {Name: "panicking", Seq: 20, Panic: "boom"}}
	if diff := cmp.Diff(wantErrs, subErrs); diff != "" {
		t.Errorf("subscriber errors (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		name string
		sub  *seqCollector
		want []uint64
	}{
		{"good", good, seqRange(1, 50)},
		{"failing", failing, seqRange(1, 9)},
		{"panicking", panicking, seqRange(1, 19)},
	} {
		if diff := cmp.Diff(c.want, c.sub.got()); diff != "" {
			t.Errorf("%s saw (-want +got):\n%s", c.name, diff)
		}
	}
	if n := len(readBundle(t, path)); n != 50 {
		t.Errorf("bundle holds %d events, want 50: the writer must go on after subscribers fail", n)
	}
}

func TestRecorderClosed(t *testing.T) {
	rec := New(nil, nil)
	if rec.Retains() {
		t.Error("Retains() = true with no subscribers")
	}
	rec.Subscribe("s", &seqCollector{})
	if !rec.Retains() {
		t.Error("Retains() = false with a subscriber")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindMark}); !errors.Is(err, ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
	if err := rec.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func ExampleRecorder() {
	rec := New(nil, &Options{Redact: []string{"hunter2"}})
	done := make(chan struct{})
	rec.Subscribe("printer", SubscriberFunc(func(ev *bundle.Event) error {
		fmt.Printf("%d %s %s\n", ev.Seq, ev.Kind, ev.Body.Data)
		if ev.Seq == 2 {
			close(done)
		}
		return nil
	}))
	rec.Emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Body: bundle.Text([]byte("password is hunter2"))})
	rec.Emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Body: bundle.Text([]byte(`{"access_token":"abcdef123"}`))})
	<-done
	rec.Close()
	// Output:
	// 1 proc.log password is [REDACTED]
	// 2 proc.log {"access_token":"[REDACTED]"}
}
