package record

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestProcessAndGateThroughRecorder records a supervised process and a gate
// through the real Recorder into a bundle, reads the bundle back, and checks
// what a replay would see: the events in order, the secret redacted, and
// proc.exit the last event of the process.
func TestProcessAndGateThroughRecorder(t *testing.T) {
	testkit.CheckLeaks(t)
	var file bytes.Buffer
	w, err := bundle.NewWriter(&file, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(w, &Options{Redact: []string{"SECRET123"}})

	p := startHelper(t, rec, "lines", nil)
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	waitClosed(t, p.Done(), "exit")
	g, c := startGate(t, rec, &GateOptions{Hold: []string{"/child"}})
	if r := <-get(t.Context(), c, g.URL()+"/nope"); r.Status != 404 {
		t.Fatalf("gate answered %+v, want 404", r)
	}
	if err := rec.Close(); err != nil {
		t.Fatalf("closing the recorder: %v", err)
	}

	r, err := bundle.NewReader(&file, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []bundle.Kind
	var stdout []string
	for {
		var ev bundle.Event
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != bundle.KindProcLog {
			kinds = append(kinds, ev.Kind)
		} else if ev.Type == bundle.TypeStdout {
			stdout = append(stdout, string(ev.Body.Data))
		}
	}
	wantKinds := []bundle.Kind{bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcExit,
		bundle.KindGateRequest, bundle.KindGateRelease}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("kinds read back, logs left out (-want +got):\n%s", diff)
	}
	wantOut := []string{"out 1", "token=[REDACTED] in a log", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "tail without newline"}
	if diff := cmp.Diff(wantOut, stdout); diff != "" {
		t.Errorf("stdout read back (-want +got):\n%s", diff)
	}
}
