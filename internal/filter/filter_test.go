package filter

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
)

// events is a small bundle: an HTTP exchange answered 404, a WebSocket
// connection carrying an Effect RPC chunk with a notification turn item, a
// server's stderr line and its exit.
func events() []*bundle.Event {
	return []*bundle.Event{
		{Seq: 1, T: 1e9, Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "http://127.0.0.1:9/api/orchestration/threads/t1",
			Header: http.Header{"Accept": {"application/json"}}},
		{Seq: 2, T: 1.2e9, Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 404, Header: http.Header{"Content-Type": {"application/json"}}},
		{Seq: 3, T: 1.3e9, Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"error":"no thread"}`))},
		{Seq: 4, T: 1.4e9, Kind: bundle.KindHTTPEnd, Conn: "h1"},
		{Seq: 5, T: 2e9, Kind: bundle.KindWSOpen, Conn: "ws1", URL: "ws://127.0.0.1:9/ws"},
		{Seq: 6, T: 2.5e9, Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer,
			Body: bundle.Text([]byte(`{"_tag":"Request","id":"3","tag":"orchestration.subscribeThread","payload":{"threadId":"t1"}}`))},
		{Seq: 7, T: 3e9, Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient,
			Body: bundle.Text([]byte(`{"_tag":"Chunk","requestId":"3","values":[{"kind":"turn-item","item":{"type":"task_notification","n":2}}]}`))},
		{Seq: 8, T: 4e9, Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStderr, Body: bundle.Text([]byte("boom: Notification lost"))},
		{Seq: 9, T: 5e9, Kind: bundle.KindProcExit, Conn: "server", Code: 2},
		{Seq: 10, T: 6e9, Kind: bundle.KindProcSignal, Conn: "provider", Name: "SIGTERM"},
		{Seq: 11, T: 6.1e9, Kind: bundle.KindProcExit, Conn: "provider", Code: -1, Name: "SIGTERM"},
	}
}

// subjects are the events with their context, as inspect builds them; the
// two RPC messages belong to one call that failed.
func subjects() []Subject {
	tr := NewTracker()
	var out []Subject
	for _, ev := range events() {
		s := tr.Subject(ev)
		s.Summary = string(ev.Kind) + " " + ev.Conn
		if ev.Kind == bundle.KindWSMessage {
			s.Calls = []Call{{Method: "orchestration.subscribeThread", Outcome: "failure"}}
		}
		out = append(out, s)
	}
	return out
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []uint64
	}{
		{"~b notification", []uint64{7, 8}},
		{"notification", []uint64{7, 8}},
		{"~b task_notification", []uint64{7}},
		{"~bs notification", []uint64{7}},
		{"~bq notification", nil},
		{"~bq threadId", []uint64{6}},
		{"~k ws.message", []uint64{6, 7}},
		{"~k ws", []uint64{5, 6, 7}},
		{"~k ws.message & ~b notification", []uint64{7}},
		{"~k ws.message ~b notification", []uint64{7}},
		{"~k ws.message & !~b notification", []uint64{6}},
		{"~c 404", []uint64{2, 3, 4}},
		{"~c 4xx", []uint64{2, 3, 4}},
		{"~c 200-299", nil},
		{"~u /threads/t1", []uint64{1, 2, 3, 4}},
		{"~u ^ws:", []uint64{5, 6, 7}},
		{"~m get", []uint64{1, 2, 3, 4}},
		{"~h accept:.*json", []uint64{1, 2, 3, 4}},
		{"~hs content-type", []uint64{2, 3, 4}},
		{"~hq content-type", nil},
		{"~t json", []uint64{2, 3, 4}},
		{"~conn ws1 & ~dir s2c", []uint64{7}},
		{"~dir c2s", []uint64{6}},
		{"~rpc subscribe", []uint64{6, 7}},
		{"~outcome failure", []uint64{6, 7}},
		{"~outcome success", nil},
		{"~j values.0.item.type=task_notification", []uint64{7}},
		{"~j values.*.item.n=2", []uint64{7}},
		{`~j values.*.item.n="2"`, []uint64{7}},
		{"~j payload.threadId", []uint64{6}},
		{"~j _tag=Request", []uint64{6}},
		{"~j _tag=Exit", nil},
		{"~seq 3-5", []uint64{3, 4, 5}},
		{"~seq 10-", []uint64{10, 11}},
		{"~seq -2", []uint64{1, 2}},
		{"~seq 7", []uint64{7}},
		{"~time 2s-3s", []uint64{5, 6, 7}},
		{"~time 1.3-1.4", []uint64{3, 4}},
		{"~time 4", []uint64{8}},
		{"~e", []uint64{2, 8, 9}},
		{"~flag exit", []uint64{9}},
		{"~flag stderr | ~flag http", []uint64{2, 8}},
		{"(~k http | ~k ws) & ~seq 4-5", []uint64{4, 5}},
		{"!(~k http | ~k ws | ~k proc)", nil},
		{"~all", []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{`"Notification lost"`, []uint64{8}},
		{`~b "no thread"`, []uint64{3}},
		{"~b 'NO THREAD'", []uint64{3}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, s := range subjects() {
				if e.Match(&s) {
					got = append(got, s.Seq)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s matched (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want SyntaxError
	}{
		{"", SyntaxError{Column: 1, Expected: "an expression"}},
		{"~b", SyntaxError{Column: 3, Expected: "a regular expression after ~b"}},
		{"~k ws &", SyntaxError{Column: 8, Expected: "a filter (~b, ~k, ..., a word, ! or a parenthesis)"}},
		{"(~k ws", SyntaxError{Column: 7, Expected: "a closing )"}},
		{"~k ws)", SyntaxError{Column: 6, Expected: "an operator (& or |) or the end of the expression", Found: ")"}},
		{"~x foo", SyntaxError{Column: 1, Expected: "an operator (" + operatorList() + ")", Found: "~x"}},
		{"~b (", SyntaxError{Column: 4, Expected: "a regular expression after ~b", Found: "("}},
		{"~b 'abc", SyntaxError{Column: 4, Expected: "a closing '"}},
		{"~b a[", SyntaxError{Column: 4, Expected: "a regular expression after ~b (a regular expression: missing closing ]: `[`)", Found: "a["}},
		{"~c 2x", SyntaxError{Column: 4, Expected: `a status code (200, 4xx or 400-499) after ~c ("2x" is not a whole number)`, Found: "2x"}},
		{"~seq 9-3", SyntaxError{Column: 6, Expected: "a seq (N, A-B, A- or -B) after ~seq (9 is after 3)", Found: "9-3"}},
		{"~dir up", SyntaxError{Column: 6, Expected: `a direction (c2s or s2c) after ~dir ("up" is neither)`, Found: "up"}},
		{"~time 1h-1s", SyntaxError{Column: 7, Expected: "a time range since the recording started (2s, 1.5-3, 500ms-2s) after ~time (1h0m0s is after 1s)", Found: "1h-1s"}},
		{"~j a..b", SyntaxError{Column: 4, Expected: "a JSON path (a.b.0.c, * for any member, =VALUE to compare) after ~j (a path segment is empty)", Found: "a..b"}},
		{"é ~zz", SyntaxError{Column: 3, Expected: "an operator (" + operatorList() + ")", Found: "~zz"}},
		{"~outcome won", SyntaxError{Column: 10, Expected: `a call outcome (success, failure, defect, interrupted, unknown, open) after ~outcome ("won" is not one)`, Found: "won"}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := Parse(tc.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tc.expr, err)
			}
			tc.want.Expr = tc.expr
			if diff := cmp.Diff(tc.want, *se); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

func TestSyntaxErrorText(t *testing.T) {
	_, err := Parse("~k ws & ~c")
	want := `filter "~k ws & ~c": column 11: expected a status code (200, 4xx or 400-499) after ~c, found the end of the expression`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestNeeds(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want Needs
	}{
		{"~k ws & ~seq 1-9 & ~c 4xx", Needs{}},
		{"~b x", Needs{Body: true}},
		{"word", Needs{Body: true, Summary: true, Calls: true}},
		{"~rpc x | ~e", Needs{Calls: true, Flags: true}},
		{"!~j a=1", Needs{Body: true}},
	} {
		e, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, e.Needs()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.expr, diff)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"~b notification", "~k ws.message & !(~c 4xx | ~u '/x')", `"a b" ~j a.*.b=1`, "~seq 1-", "~time 1s-2s", "((", "~b '", "~flag exit"} {
		f.Add(s)
	}
	subs := subjects()
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Column < 1 || se.Expected == "" {
				t.Fatalf("Parse(%q) = %v: want a *SyntaxError with a column and what was expected", src, err)
			}
			return
		}
		if e.String() != src {
			t.Fatalf("String() = %q, want %q", e.String(), src)
		}
		for i := range subs {
			e.Match(&subs[i])
		}
	})
}

func TestFlags(t *testing.T) {
	var fl Flagger
	var got []string
	for _, ev := range append(events(),
		&bundle.Event{Seq: 12, Kind: bundle.KindProcExit, Conn: "provider-1", Code: -1, Name: "SIGTERM"},
		&bundle.Event{Seq: 13, Kind: bundle.KindProcExit, Conn: "provider-2", Code: -1, Name: "SIGSEGV"},
		&bundle.Event{Seq: 14, Kind: bundle.KindProcExit, Conn: "provider-3", Code: -1, Err: "the provider's stream ended without an exit status"},
		&bundle.Event{Seq: 15, Kind: bundle.KindHTTPEnd, Conn: "h2", Err: "upstream reset"},
		&bundle.Event{Seq: 16, Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("fine"))},
	) {
		if k, why := fl.Flag(ev); k != "" {
			got = append(got, fmt.Sprintf("%d %s %s", ev.Seq, k, why))
		}
	}
	want := []string{"2 http HTTP 404", "8 stderr stderr", "9 exit exit status 2", "13 exit killed by SIGSEGV", "14 exit the provider's stream ended without an exit status", "15 http upstream reset"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		outcome   string
		interrupt bool
		want      string
	}{{"success", false, ""}, {"failure", false, FlagFailed}, {"failure", true, ""}, {"defect", false, FlagFailed}, {"interrupted", false, ""}, {"unknown", false, FlagUnanswered}, {"open", false, FlagUnanswered}} {
		if got := CallFlag(tc.outcome, tc.interrupt); got != tc.want {
			t.Errorf("CallFlag(%s, %v) = %q, want %q", tc.outcome, tc.interrupt, got, tc.want)
		}
	}
	texts := []string{FlagText("exit status 1", "exit 1: exit status 1"), FlagText("HTTP 529", "529"), FlagText("stderr", "boom")}
	if diff := cmp.Diff([]string{"exit 1: exit status 1", "HTTP 529", "stderr: boom"}, texts); diff != "" {
		t.Errorf("FlagText (-want +got):\n%s", diff)
	}
}
