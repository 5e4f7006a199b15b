package delivery

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// leanView reduces a projection decoded by encoding/json to the fields the
// lean decoder keeps.
func leanView(p *t3.Projection) *t3.Projection {
	if p == nil {
		return nil
	}
	v := *p
	v.Thread, v.UpdatedAt = nil, ""
	if p.TurnItems != nil {
		v.TurnItems = make([]t3.TurnItem, len(p.TurnItems))
		for i, it := range p.TurnItems {
			v.TurnItems[i] = t3.TurnItem{Type: it.Type}
		}
	}
	return &v
}

// sameAsEncodingJSON checks every lean decoder on input against
// encoding/json: when a lean decoder accepts it, encoding/json must accept it
// too and produce the same fields. It returns the names of the lean decoders
// that accepted it.
func sameAsEncodingJSON(t *testing.T, input []byte) map[string]bool {
	t.Helper()
	d := newLeanDecoder()
	accepted := map[string]bool{}
	compare := func(what string, leanOK bool, leanGot any, refErr error, refGot any) {
		t.Helper()
		testkit.LeanAgrees(t, accepted, input, what, leanOK, leanGot, refErr, refGot)
	}

	// A projection decoded again from the same bytes, with another in
	// between, comes from the memo: the same projection, equal to one
	// decoded afresh.
	for name, decode := range map[string]func(*leanDecoder, []byte) (*t3.Projection, bool){
		"getThreadProjection": (*leanDecoder).getProjection, "launchThread": (*leanDecoder).launchAnswer, "thread read": (*leanDecoder).threadRead,
	} {
		memo := newLeanDecoder()
		first, ok := decode(memo, input)
		if !ok {
			continue
		}
		decode(memo, []byte(`{"projection":{"runs":[]}}`))
		again, ok := decode(memo, bytes.Clone(input))
		fresh, _ := decode(newLeanDecoder(), input)
		if !ok || again != first {
			t.Errorf("%s of %q decoded again: %p, %v; first %p", name, input, again, ok, first)
		} else if diff := cmp.Diff(fresh, again); diff != "" {
			t.Errorf("%s of %q from the memo (-fresh +memo):\n%s", name, input, diff)
		}
		accepted["memo"] = true
	}

	lp, leanOK := d.getProjection(input)
	var rp t3.Projection
	compare("getThreadProjection", leanOK, lp, json.Unmarshal(input, &rp), leanView(&rp))

	lp, leanOK = d.launchAnswer(input)
	var launch struct {
		ThreadID   string         `json:"threadId"`
		Projection *t3.Projection `json:"projection"`
	}
	compare("launchThread", leanOK, lp, json.Unmarshal(input, &launch), leanView(launch.Projection))

	lp, leanOK = d.threadRead(input)
	var read struct {
		Projection *t3.Projection `json:"projection"`
	}
	compare("thread read", leanOK, lp, json.Unmarshal(input, &read), leanView(read.Projection))

	lps, leanOK := d.snapshots(input)
	var items []struct {
		Kind       string         `json:"kind"`
		Projection *t3.Projection `json:"projection"`
	}
	err := json.Unmarshal(input, &items)
	var want []*t3.Projection
	for _, it := range items {
		if it.Kind == t3.ItemKindSnapshot && it.Projection != nil {
			want = append(want, leanView(it.Projection))
		}
	}
	compare("subscribeThread chunk", leanOK, lps, err, want)

	return accepted
}

const sampleProjection = `{"thread":{"id":"t1","title":"x"},"runs":[{"id":"run-1","ordinal":1,"status":"completed"},null],` +
	`"subagents":[{"id":"task-1","origin":"app_owned","childThreadId":"c1","status":"completed","result":"RESULT_1",` +
	`"completionDelivery":{"state":"acknowledged","observedByRunId":"run-2","extra":[1,2]}},{"id":"t2","result":null,"completionDelivery":null}],` +
	`"messages":[{"id":"m1","runId":"run-1","role":"assistant","text":"ACK:RESULT_1"}],` +
	`"turnItems":[{"id":"i1","type":"notification","runId":"run-1","source":"task","outcome":"completed","summary":"s","text":"xxxx"}],` +
	`"providerThreads":[{"id":"pt-1","providerSessionId":"ps","pendingBackgroundTasks":[{"id":"bg"},null,3]},{"id":"pt-2","pendingBackgroundTasks":null}],` +
	`"attempts":[{"id":"a"}],"updatedAt":"2026-01-01T00:00:00.000Z"}`

// TestLeanDecoders: on each input, each lean decoder either gives up or
// agrees with encoding/json; the named decoder must accept (the fast path
// covers the shapes recordings have) or refuse (encoding/json would merge,
// fold or reject where the lean decoder cannot follow).
func TestLeanDecoders(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		decoder string // the lean decoder the case is about
		accept  bool   // whether it must accept (the fast path covers it) or refuse (leave it to encoding/json)
	}{
		{"projection", sampleProjection, "getThreadProjection", true},
		{"projection with whitespace", strings.ReplaceAll(strings.ReplaceAll(sampleProjection, ",", " ,\n\t"), ":", " : "), "getThreadProjection", true},
		{"projection again, from the memo", sampleProjection, "memo", true},
		{"launchThread answer", `{"threadId":"t1","projection":` + sampleProjection + `,"resumed":false}`, "launchThread", true},
		{"thread read", `{"snapshotSequence":42,"projection":` + sampleProjection + `}`, "thread read", true},
		{"subscribe chunk", `[{"kind":"snapshot","snapshotSequence":1,"projection":` + sampleProjection + `},{"kind":"event","event":{"id":"e"}},null,{"kind":"snapshot","projection":null}]`, "subscribeThread chunk", true},
		{"null runs and fields", `{"runs":null,"subagents":[],"messages":[{"id":null,"text":null}],"turnItems":[null],"updatedAt":null}`, "getThreadProjection", true},
		{"escaped text", `{"messages":[{"id":"m1","role":"assistant","text":"line\n\"quoted\" \u00e9 \ud83d\ude00 RESULT"}]}`, "getThreadProjection", true},
		{"non-ASCII text", `{"messages":[{"id":"m1","role":"assistant","text":"café RESULT"}]}`, "getThreadProjection", true},
		{"invalid UTF-8 text", "{\"messages\":[{\"id\":\"m1\",\"text\":\"a\xff\xfeb\"}]}", "getThreadProjection", true},
		{"lone surrogate", `{"messages":[{"id":"m1","text":"a\ud800b"}]}`, "getThreadProjection", true},
		{"negative ordinal", `{"runs":[{"id":"r","ordinal":-3,"status":"running"}]}`, "getThreadProjection", true},
		{"big numbers elsewhere", `{"runs":[],"x":1.5e300,"y":-0.0,"z":123456789012345678901234567890}`, "getThreadProjection", true},

		{"duplicate key", `{"runs":[{"id":"a","status":"failed"}],"runs":[{"id":"b"}]}`, "getThreadProjection", false},
		{"duplicate nested key", `{"runs":[{"id":"a","id":"b"}]}`, "getThreadProjection", false},
		{"case-folded key", `{"Runs":[{"id":"a","status":"failed"}]}`, "getThreadProjection", false},
		{"escaped key", `{"\u0072uns":[{"id":"a"}]}`, "getThreadProjection", false},
		{"fractional ordinal", `{"runs":[{"id":"r","ordinal":1.0}]}`, "getThreadProjection", false},
		{"exponent ordinal", `{"runs":[{"id":"r","ordinal":1e2}]}`, "getThreadProjection", false},
		{"overflowing ordinal", `{"runs":[{"id":"r","ordinal":99999999999999999999}]}`, "getThreadProjection", false},
		{"string ordinal", `{"runs":[{"id":"r","ordinal":"1"}]}`, "getThreadProjection", false},
		{"number status", `{"runs":[{"id":"r","status":5}]}`, "getThreadProjection", false},
		{"number turn item text", `{"turnItems":[{"type":"x","text":5}]}`, "getThreadProjection", false},
		{"object updatedAt", `{"updatedAt":{}}`, "getThreadProjection", false},
		{"runs not an array", `{"runs":{}}`, "getThreadProjection", false},
		{"result not a string", `{"subagents":[{"result":1}]}`, "getThreadProjection", false},
		{"trailing garbage", `{"runs":[]} x`, "getThreadProjection", false},
		{"trailing comma", `{"runs":[],}`, "getThreadProjection", false},
		{"bad escape", `{"messages":[{"text":"\x"}]}`, "getThreadProjection", false},
		{"raw control character", "{\"messages\":[{\"text\":\"a\tb\"}]}", "getThreadProjection", false},
		{"unterminated", `{"runs":[{"id":"a"}`, "getThreadProjection", false},
		{"bad literal", `{"thread":nul}`, "getThreadProjection", false},
		{"bad number", `{"thread":01}`, "getThreadProjection", false},
		{"deep nesting", `{"thread":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, "getThreadProjection", true},
		{"nesting deeper than encoding/json allows", `{"thread":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, "getThreadProjection", false},
		{"not an object", `"x"`, "getThreadProjection", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameAsEncodingJSON(t, []byte(tt.input))[tt.decoder]; got != tt.accept {
				t.Errorf("lean %s decoder accepted %q: %v, want %v", tt.decoder, tt.input, got, tt.accept)
			}
		})
	}
}

// FuzzLeanDecoders: on any input, every lean decoder gives up or agrees with
// encoding/json.
func FuzzLeanDecoders(f *testing.F) {
	seeds, _ := filepath.Glob("../protocol/effectrpc/testdata/frames/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(sampleProjection))
	f.Add([]byte(`{"threadId":"t1","projection":` + sampleProjection + `}`))
	f.Add([]byte(`[{"kind":"snapshot","projection":` + sampleProjection + `}]`))
	f.Add([]byte(`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":` + sampleProjection + `}}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		sameAsEncodingJSON(t, input)
	})
}
