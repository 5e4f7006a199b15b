package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
)

// TestNeedsBody: ReplayFile has the reader decode only the payloads a check
// reads, given the engine's state.
func TestNeedsBody(t *testing.T) {
	kinds := []bundle.Kind{bundle.KindMark, bundle.KindWSMessage, bundle.KindHTTPBody, bundle.KindHTTPRequest,
		bundle.KindGateRelease, bundle.KindProcReady, bundle.KindProcLog, bundle.KindStdioLine, bundle.KindArtifact, bundle.KindVerdict}
	wire := []bundle.Kind{bundle.KindMark, bundle.KindWSMessage, bundle.KindHTTPBody, bundle.KindStdioLine, bundle.KindVerdict}
	tests := []struct {
		name  string
		setup func(e *Engine)
		want  []bundle.Kind
	}{
		// Until the end mark the protocol decoders read every message.
		{"running", func(*Engine) {}, wire},
		{"decided, before the end mark", func(e *Engine) { e.ended = true }, wire},
		{"past the end mark", func(e *Engine) { e.conf.done = true }, []bundle.Kind{bundle.KindMark, bundle.KindWSMessage, bundle.KindVerdict}},
		{"decided, past the end mark", func(e *Engine) { e.ended, e.conf.done = true, true }, []bundle.Kind{bundle.KindVerdict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEngine(nil)
			tt.setup(e)
			var got []bundle.Kind
			for _, k := range kinds {
				if e.needsBody(k) {
					got = append(got, k)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kinds whose bodies are decoded (-want +got):\n%s", diff)
			}
		})
	}
}
