package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

func report(t *testing.T, tl *Timeline) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteReport(&buf, tl, nil); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestReportGolden(t *testing.T) {
	got := report(t, load(t, liveFailing, nil))
	testkit.Golden(t, filepath.Join("testdata", "report/idle-duplicate-notification.html"), []byte(got))
	if again := report(t, load(t, liveFailing, nil)); again != got {
		t.Error("two reports of the same bundle differ")
	}
}

// TestReportHighlightsFailingSeq: for every failing live recording, the row
// of the seq the verdict names is highlighted and the verdict links to it.
func TestReportHighlightsFailingSeq(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/golden/live/*.zst")
	if err != nil {
		t.Fatal(err)
	}
	var failing int
	for _, path := range paths {
		raw, err := os.ReadFile(strings.TrimSuffix(path, ".zst") + ".verdict.json")
		if err != nil {
			t.Fatal(err)
		}
		var v assert.Verdict
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if v.Failure == nil {
			continue
		}
		failing++
		t.Run(filepath.Base(path), func(t *testing.T) {
			html := report(t, load(t, path, nil))
			row := fmt.Sprintf(`<tr id="seq-%d" class="fail">`, v.Failure.Seq)
			if n := strings.Count(html, `class="fail"`); n != 1 || !strings.Contains(html, row) {
				t.Errorf("want exactly one highlighted row %s; %d rows highlighted", row, n)
			}
			if link := fmt.Sprintf(`<a href="#seq-%d">seq %d</a>`, v.Failure.Seq, v.Failure.Seq); !strings.Contains(html, link) {
				t.Errorf("the verdict does not link to %s", link)
			}
			if !strings.Contains(html, v.Failure.Check) {
				t.Errorf("the failing check %s is not named", v.Failure.Check)
			}
		})
	}
	if failing == 0 {
		t.Fatal("no failing live recording: the test proves nothing")
	}
}

func TestReportEscapes(t *testing.T) {
	const hostile = `</script><b>bold</b>`
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("log " + hostile))},
		&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`{"_tag":"Request","id":"1","tag":"x","payload":{"text":"` + hostile + `"}}`))},
		&bundle.Event{Kind: bundle.KindArtifact, Name: hostile, Body: bundle.Text([]byte(hostile))},
	)
	html := report(t, load(t, path, nil))
	for _, bad := range []string{"</script>", "<b>"} {
		if strings.Contains(html, bad) {
			t.Errorf("the report contains %q unescaped", bad)
		}
	}
	if n := strings.Count(html, "&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;"); n < 3 {
		t.Errorf("the escaped payload appears %d times, want it in the timeline, the log, the RPC payload and the artifact", n)
	}
	for _, external := range []string{"<script", "<link", "src=", "@import", "url("} {
		if strings.Contains(html, external) {
			t.Errorf("the report is not self-contained: it has %q", external)
		}
	}
}

func TestReportTruncated(t *testing.T) {
	html := report(t, load(t, truncated, nil))
	if !strings.Contains(html, `id="truncated"`) {
		t.Error("no truncated notice in the report of a truncated bundle")
	}
	if html2 := report(t, load(t, liveFailing, nil)); strings.Contains(html2, `id="truncated"`) {
		t.Error("a truncated notice in the report of a complete bundle")
	}
}

// A long run's timeline is cut to MaxRows: the start, the failing event with
// its neighbours, and the end stay; each cut says which seqs it left out.
func TestReportCapsRows(t *testing.T) {
	tl := load(t, liveFailing, nil)
	var v assert.Verdict
	raw, err := os.ReadFile(strings.TrimSuffix(liveFailing, ".zst") + ".verdict.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	const max = 20
	if len(tl.Entries) <= max {
		t.Fatalf("the bundle has only %d events: the cap is not exercised", len(tl.Entries))
	}
	var b strings.Builder
	if err := WriteReport(&b, tl, &ReportOptions{MaxRows: max}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	rows := strings.Count(html, `<tr id="seq-`)
	if rows > max+1 {
		t.Errorf("%d timeline rows, want at most %d", rows, max+1)
	}
	for _, seq := range []uint64{tl.Entries[0].Seq, v.Failure.Seq, tl.Entries[len(tl.Entries)-1].Seq} {
		if !strings.Contains(html, fmt.Sprintf(`<tr id="seq-%d"`, seq)) {
			t.Errorf("row for seq %d was cut", seq)
		}
	}
	if n := strings.Count(html, `<tr class="gap">`); n == 0 {
		t.Error("no gap row says that events were left out")
	}
	if !strings.Contains(html, "events not shown: wireproof inspect "+liveFailing+" --seq ") {
		t.Error("a gap row does not say how to see what it left out")
	}
}
