package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// startGate starts a gate closed when the test ends, and an HTTP client of
// its own whose idle connections are closed too.
func startGate(t *testing.T, em Emitter, opts *GateOptions) (*Gate, *http.Client) {
	t.Helper()
	g, err := StartGate(t.Context(), em, opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return g, &http.Client{Transport: tr}
}

// reply is what a client got from the gate.
type reply struct {
	Status int
	Body   string
	Err    bool
}

// get requests url in the background and delivers what came back.
func get(ctx context.Context, c *http.Client, url string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("X-Test", "held")
		resp, err := c.Do(req)
		if err != nil {
			out <- reply{Err: true}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- reply{Status: resp.StatusCode, Body: string(b), Err: err != nil}
	}()
	return out
}

func next(t *testing.T, g *Gate) *HeldRequest {
	t.Helper()
	select {
	case h := <-g.Requests():
		return h
	case <-t.Context().Done():
		t.Fatal("test ended waiting for a gate request")
		return nil
	}
}

func TestGateHoldsUntilReleased(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	g, c := startGate(t, &log, &GateOptions{Hold: []string{"/child", "/child/parent"}})
	got := get(t.Context(), c, g.URL()+"/child?try=1")
	h := next(t, g)
	if diff := cmp.Diff([]string{"GET", "/child", "/child?try=1", "held"},
		[]string{h.Method, h.Path, h.URL, h.Header.Get("X-Test")}); diff != "" {
		t.Errorf("held request (-want +got):\n%s", diff)
	}
	select {
	case r := <-got:
		t.Fatalf("the client got %+v before the release", r)
	default:
	}
	if err := h.Release(http.StatusOK, []byte("RESULT_1")); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if diff := cmp.Diff(reply{Status: 200, Body: "RESULT_1"}, <-got); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
	if err := h.Release(http.StatusOK, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("second Release = %v, want ErrReleased", err)
	}
	want := []seen{
		{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/child?try=1"},
		{Kind: bundle.KindGateRelease, Conn: "gate", URL: "/child?try=1", Status: 200, Body: "RESULT_1", Enc: bundle.EncodingText},
	}
	evs := log.events()
	if diff := cmp.Diff(want, views(evs, nil)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := evs[0].Header.Get("X-Test"); got != "held" {
		t.Errorf("gate.request header X-Test = %q, want held", got)
	}
}

func TestGateAnswersOtherPathsAtOnce(t *testing.T) {
	tests := []struct {
		name string
		hold []string
		path string
		want []seen
	}{
		{"unknown path", []string{"/child"}, "/other",
			[]seen{{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/other"},
				{Kind: bundle.KindGateRelease, Conn: "gate", URL: "/other", Status: 404}}},
		{"a held path's prefix", []string{"/child/parent"}, "/child",
			[]seen{{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/child"},
				{Kind: bundle.KindGateRelease, Conn: "gate", URL: "/child", Status: 404}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			var log eventLog
			g, c := startGate(t, &log, &GateOptions{Hold: tt.hold})
			if diff := cmp.Diff(reply{Status: 404}, <-get(t.Context(), c, g.URL()+tt.path)); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, views(log.events(), nil)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			select {
			case h := <-g.Requests():
				t.Errorf("request for %s was handed to the controller", h.Path)
			default:
			}
		})
	}
}

func TestGateClientGoneBeforeRelease(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	g, c := startGate(t, &log, nil)
	ctx, cancel := context.WithCancel(t.Context())
	got := get(ctx, c, g.URL()+"/child")
	h := next(t, g)
	cancel()
	waitClosed(t, h.Gone(), "Gone after the client went away")
	if r := <-got; !r.Err {
		t.Errorf("cancelled client got %+v, want an error", r)
	}
	if err := h.Release(http.StatusOK, []byte("late")); !errors.Is(err, ErrClientGone) {
		t.Errorf("Release after the client went away = %v, want ErrClientGone", err)
	}
	want := []seen{
		{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/child"},
		{Kind: bundle.KindGateRelease, Conn: "gate", URL: "/child", Status: 200, Body: "late",
			Enc: bundle.EncodingText, Err: ErrClientGone.Error()},
	}
	if diff := cmp.Diff(want, views(log.events(), nil)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestGateCloseAbortsHeldRequests(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	g, c := startGate(t, &log, nil)
	got := get(t.Context(), c, g.URL()+"/child")
	h := next(t, g)
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitClosed(t, h.Gone(), "Gone after Close")
	if r := <-got; !r.Err {
		t.Errorf("client of a closed gate got %+v, want an error", r)
	}
	want := []seen{{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/child"}}
	if diff := cmp.Diff(want, views(log.events(), nil)); diff != "" {
		t.Errorf("events (-want +got): Close must release nothing\n%s", diff)
	}
	if err := h.Release(http.StatusOK, nil); !errors.Is(err, ErrGateClosed) {
		t.Errorf("Release after Close = %v, want ErrGateClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestGateReleaseRejectsBadStatus(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	g, c := startGate(t, &log, nil)
	got := get(t.Context(), c, g.URL()+"/child")
	h := next(t, g)
	err := h.Release(0, nil)
	if err == nil || !strings.Contains(err.Error(), "status 0") {
		t.Errorf("Release(0) = %v, want an error naming the status", err)
	}
	// The bad call did not use up the release.
	if err := h.Release(http.StatusServiceUnavailable, []byte("Injected dependency failure")); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if diff := cmp.Diff(reply{Status: 503, Body: "Injected dependency failure"}, <-got); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestStartGateBadAddress(t *testing.T) {
	var log eventLog
	_, err := StartGate(t.Context(), &log, &GateOptions{Addr: "127.0.0.1:notaport"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:notaport") {
		t.Errorf("StartGate = %v, want an error naming the address", err)
	}
	if _, err := StartGate(t.Context(), nil, nil); err == nil {
		t.Error("StartGate without an Emitter succeeded")
	}
}

// printer is an Emitter that prints the events examples show.
type printer struct{}

func (printer) Emit(ev *bundle.Event) (uint64, error) {
	line := fmt.Sprintf("%s %s", ev.Kind, ev.Conn)
	for _, s := range []string{string(ev.Dir), ev.Method, ev.URL} {
		if s != "" {
			line += " " + s
		}
	}
	if ev.Status != 0 {
		line += fmt.Sprintf(" %d", ev.Status)
	}
	if ev.Body.Data != nil {
		line += fmt.Sprintf(" %s:%s", ev.Body.Encoding(), ev.Body.Data)
	}
	fmt.Println(line)
	return 0, nil
}

// A gate holds the child's request until the controller releases it with
// the secret; any other path is answered 404 at once.
func ExampleStartGate() {
	ctx := context.Background()
	g, err := StartGate(ctx, printer{}, &GateOptions{Hold: []string{"/task"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	answered := make(chan string)
	go func() {
		resp, err := client.Get(g.URL() + "/task")
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answered <- fmt.Sprintf("client got %d %s", resp.StatusCode, body)
	}()

	held := <-g.Requests() // the policy decides when; here, at once
	held.Release(http.StatusOK, []byte("RESULT_42"))
	fmt.Println(<-answered)

	resp, err := client.Get(g.URL() + "/elsewhere")
	if err == nil {
		resp.Body.Close()
		fmt.Println("client got", resp.StatusCode)
	}
	// Output:
	// gate.request gate GET /task
	// gate.release gate /task 200 text:RESULT_42
	// client got 200 RESULT_42
	// gate.request gate GET /elsewhere
	// gate.release gate /elsewhere 404
	// client got 404
}
