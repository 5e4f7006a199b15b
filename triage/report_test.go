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
	golden(t, "report/idle-duplicate-notification.html", []byte(got))
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
