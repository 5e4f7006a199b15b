package jsonscan

import (
	"strings"
	"testing"
)

// sameWithMemo checks that SkipMemo with m ends where Skip does.
func sameWithMemo(t *testing.T, m *Memo, b []byte, depth int) {
	t.Helper()
	i := SkipSpace(b, 0)
	if got, want := SkipMemo(b, i, depth, m), Skip(b, i, depth); got != want {
		t.Errorf("SkipMemo(%.80q, depth %d) = %d, Skip = %d (memo %.40q at depth %d)", b, depth, got, want, m.raw, m.depth)
	}
}

func TestSkipMemo(t *testing.T) {
	proj := `{"runs":[{"id":"run-1"}],"turnItems":[` + strings.Repeat(`{"type":"x","text":"`+strings.Repeat("y", 300)+`"},`, 20) + `{"type":"z"}]}`
	exit := func(id, value string) []byte {
		return []byte(`{"_tag":"Exit","requestId":"` + id + `","exit":{"_tag":"Success","value":` + value + `}}`)
	}
	m := &Memo{}
	sameWithMemo(t, m, exit("1", proj), 0)
	if !strings.Contains(proj, string(m.raw)) && !strings.Contains(string(exit("1", proj)), string(m.raw)) || len(m.raw) < minMemo {
		t.Fatalf("memo after the first scan: %.60q (%d bytes)", m.raw, len(m.raw))
	}
	kept := string(m.raw)
	for id := 2; id < 6; id++ {
		sameWithMemo(t, m, exit(string(rune('0'+id)), proj), 0)
	}
	if string(m.raw) != kept || m.misses != 0 {
		t.Errorf("repeats were not taken from the memo: misses %d", m.misses)
	}
	// The same value but for one byte that makes it invalid, in the middle
	// and at the very end, is scanned and refused.
	bad := []byte(proj)
	bad[len(bad)/2] = '\x01'
	sameWithMemo(t, m, exit("7", string(bad)), 0)
	cut := proj[:len(proj)-1] + "]"
	sameWithMemo(t, m, exit("8", cut), 0)
	// A value deeper than where the memo's copy was validated is scanned:
	// near MaxDepth it may not fit.
	deep := &Memo{}
	inner := "[" + strings.Repeat("[1],", minMemo/4) + "[[1]]]"
	sameWithMemo(t, deep, []byte("["+inner+"]"), 0)
	if string(deep.raw) != inner {
		t.Fatalf("memo %.40q, want the inner array", deep.raw)
	}
	sameWithMemo(t, deep, []byte(inner), MaxDepth-2)
	sameWithMemo(t, deep, []byte(inner), 1)
}

// FuzzSkipMemo: scans that share a memo, in any order, end where Skip ends.
func FuzzSkipMemo(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), []byte(s))
	}
	f.Add([]byte(`{"a":{"b":[1,2,{"c":3}]},"d":1}`), []byte(`[{"b":[1,2,{"c":3}]},{"b":[1,2,{"c":3]}]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		defer func(n int) { minMemo = n }(minMemo)
		minMemo = 2
		m := &Memo{}
		for range 3 {
			sameWithMemo(t, m, a, 0)
			sameWithMemo(t, m, b, 0)
			sameWithMemo(t, m, b, 2)
		}
	})
}

// TestSkipMemoBounded: a container above maxMemo is not kept; the largest one
// below it is.
func TestSkipMemoBounded(t *testing.T) {
	small := `["` + strings.Repeat("s", minMemo) + `"]`
	huge := `[` + small + `,"` + strings.Repeat("h", maxMemo) + `"]`
	m := &Memo{}
	sameWithMemo(t, m, []byte(`{"a":`+huge+`}`), 0)
	if string(m.raw) != small {
		t.Errorf("memo holds %d bytes, want the %d of the largest container under the bound", len(m.raw), len(small))
	}
}
