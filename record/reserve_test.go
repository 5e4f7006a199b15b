package record

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestReserveOrder: events are written in the order their places were taken,
// whatever the order they are filled in; an Emit behind an unfilled place
// waits for it; a cancelled place is left out; times never go back; and the
// secrets known when an event is written are redacted from it.
func TestReserveOrder(t *testing.T) {
	testkit.CheckLeaks(t)
	rec, path := newFileRecorder(t, &Options{Redact: []string{"SECRET1"}})
	mark := func(name string) *bundle.Event {
		return &bundle.Event{Kind: bundle.KindMark, Name: name, Body: bundle.Text([]byte(name + " SECRET1 SECRET2"))}
	}
	a, b, c := rec.Reserve(), rec.Reserve(), rec.Reserve()
	emitted := make(chan uint64, 1)
	go func() {
		seq, err := rec.Emit(mark("d"))
		if err != nil {
			t.Error(err)
		}
		emitted <- seq
	}()
	if err := c.Emit(mark("c")); err != nil {
		t.Fatal(err)
	}
	rec.AddSecret("SECRET2") // learned before a and b are written
	b.Cancel()
	select {
	case seq := <-emitted:
		t.Fatalf("Emit returned seq %d before the place ahead of it was filled", seq)
	default:
	}
	if err := a.Emit(mark("a")); err != nil {
		t.Fatal(err)
	}
	if seq := <-emitted; seq != 3 {
		t.Errorf("Emit behind the places returned seq %d, want 3", seq)
	}
	if err := b.Emit(mark("b")); err != ErrClosed {
		t.Errorf("Emit into a cancelled place: %v, want ErrClosed", err)
	}
	late := rec.Reserve()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := late.Emit(mark("late")); err != ErrClosed {
		t.Errorf("Emit into a place the closed recorder gave up: %v, want ErrClosed", err)
	}
	if err := rec.Reserve().Emit(mark("after")); err != ErrClosed {
		t.Errorf("Emit into a place taken after Close: %v, want ErrClosed", err)
	}
	var got []string
	var lastT int64
	for _, ev := range readBundle(t, path) {
		got = append(got, string(ev.Body.Data))
		if ev.T < lastT {
			t.Errorf("seq %d: t %d before the previous event's %d", ev.Seq, ev.T, lastT)
		}
		lastT = ev.T
	}
	want := []string{"a [REDACTED] [REDACTED]", "c [REDACTED] [REDACTED]", "d [REDACTED] [REDACTED]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events written (-want +got):\n%s", diff)
	}
}

// TestSettledWaitsForPlaces: Settled returns only once every place taken
// before it is written, with the seq of the last event written.
func TestSettledWaitsForPlaces(t *testing.T) {
	testkit.CheckLeaks(t)
	rec, _ := newFileRecorder(t, nil)
	if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindMark, Name: "first"}); err != nil {
		t.Fatal(err)
	}
	if got := rec.Settled(); got != 1 {
		t.Errorf("Settled with no place open = %d, want 1", got)
	}
	a, b := rec.Reserve(), rec.Reserve()
	settled := make(chan uint64, 1)
	go func() { settled <- rec.Settled() }()
	if err := a.Emit(&bundle.Event{Kind: bundle.KindMark, Name: "a"}); err != nil {
		t.Fatal(err)
	}
	select {
	case seq := <-settled:
		t.Fatalf("Settled returned %d while a place before it was open", seq)
	default:
	}
	if err := b.Emit(&bundle.Event{Kind: bundle.KindMark, Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if seq := <-settled; seq != 3 {
		t.Errorf("Settled = %d, want 3", seq)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}
