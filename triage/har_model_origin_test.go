package triage

import (
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestHARModelOrigins: a verify bundle holds the server's exchanges and, under
// bundle.ModelConnPrefix, the model proxy's; each HAR entry carries the
// origin its own traffic went to.
func TestHARModelOrigins(t *testing.T) {
	server := []*bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/api/health"},
		{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
		{Kind: bundle.KindHTTPEnd, Conn: "h1"},
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
	}
	calls, _ := synth.ModelCalls(bundle.ModelConnPrefix+"h1", bundle.ModelConnPrefix+"h2", synth.ModelFine)
	for _, tc := range []struct {
		name  string
		opts  map[string]string
		model string // origin of the model calls
	}{
		{"scripted model", map[string]string{"port": "41234"}, "http://model"},
		{"model upstream", map[string]string{"port": "41234", "modelUpstream": "https://models.example:8443/base"}, "https://models.example:8443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := append([]*bundle.Event(nil), server...)
			for i := range calls {
				evs = append(evs, &calls[i])
			}
			path := writeBundleOptions(t, tc.opts, evs...)
			var got []string
			for _, e := range BuildHAR(load(t, path, nil), nil).Log.Entries {
				got = append(got, e.Request.URL)
			}
			want := []string{"http://127.0.0.1:41234/api/health", "ws://127.0.0.1:41234/ws", tc.model + "/v1/messages?beta=true", tc.model + "/v1/messages?beta=true"}
			if diff := cmpDiff(want, got); diff != "" {
				t.Errorf("entry URLs (-want +got):\n%s", diff)
			}
		})
	}
}
