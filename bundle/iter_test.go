package bundle

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// collect ranges over seq, detaching every event, and returns the events
// and the errors yielded.
func collect(t *testing.T, r *Reader, ctx context.Context) ([]Event, []error) {
	t.Helper()
	var evs []Event
	var errs []error
	for ev, err := range r.Events(ctx) {
		if err != nil {
			if ev != nil {
				t.Errorf("an error came with event %+v, want nil", ev)
			}
			errs = append(errs, err)
			continue
		}
		ev.Detach()
		evs = append(evs, *ev)
	}
	return evs, errs
}

func TestAll(t *testing.T) {
	events := sampleEvents()
	full := writeBundle(t, events, false) // flushed, never closed: no trailer
	good := writeBundle(t, events[:3], true)
	gap := recompress(t, good, func(lines [][]byte) [][]byte { return append(lines[:2:2], lines[3:]...) })
	tests := []struct {
		name      string
		data      []byte
		want      []Event
		truncated bool
		err       string
	}{
		{"whole bundle", good, events[:3], false, ""},
		{"cut by kill -9: up to the last flush, truncated, no error", full, events, true, ""},
		{"broken before the end: one error, the events before it", gap, events[:1], false, "x.zst: line 3: seq 3 where 2 was due"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), &ReaderOptions{Name: "x.zst"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, errs := collect(t, r, context.Background())
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			switch {
			case tc.err == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.err != "" && (len(errs) != 1 || !bytes.Contains([]byte(errs[0].Error()), []byte(tc.err))):
				t.Errorf("errors %v, want one containing %q", errs, tc.err)
			}
			if tc.err != "" {
				var fe *FormatError
				if !errors.As(errs[0], &fe) {
					t.Errorf("error %T, want a *FormatError", errs[0])
				}
			}
			if r.Truncated() != tc.truncated {
				t.Errorf("Truncated() = %v, want %v (%s)", r.Truncated(), tc.truncated, r.TruncatedReason())
			}
		})
	}
}

// TestAllBreak: a loop that breaks early leaves the Reader where it stopped,
// and a cancelled context ends the iteration with its error.
func TestAllBreak(t *testing.T) {
	events := sampleEvents()
	r, err := NewReader(bytes.NewReader(writeBundle(t, events, true)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for ev, err := range r.All() {
		if err != nil || ev.Seq != 1 {
			t.Fatalf("first event %+v, %v", ev, err)
		}
		break
	}
	var next Event
	if err := r.Next(&next); err != nil || next.Seq != 2 {
		t.Fatalf("after break: Next gave seq %d, %v; want 2", next.Seq, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, errs := collect(t, r, ctx)
	if len(got) != 0 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled: %d events, errors %v; want none and context.Canceled", len(got), errs)
	}
}
