package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

// JUnit XML as CI tools read it (Jenkins, GitLab, GitHub's test reporters):
// one testsuite with its time, timestamp and hostname, one testcase per
// bundle with its replay time; a failed bundle's failure carries the
// deciding check as its type and the check's message, its text every
// suite's status and every failed suite's failure, and its system-out the
// command that shows the events around each failure (`look:`).
// cmd/wireproof/testdata/junit holds the schema (Jenkins xUnit's JUnit
// XSD) a test validates the output against.
type junitSuite struct {
	XMLName   xml.Name    `xml:"testsuite"`
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Hostname  string      `xml:"hostname,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitRun is what the suite says of the run as a whole: when it started
// and how long it took.
type junitRun struct {
	Started time.Time
	Elapsed time.Duration
}

// junitTime is a duration in seconds as JUnit writes it (Surefire's
// pattern: digits, a point, milliseconds).
func junitTime(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}

// junitTimestamp is Ant's testsuite timestamp: ISO 8601 without a zone
// (the time is UTC).
func junitTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05")
}

func buildJUnit(outcomes []replayOutcome, run junitRun) junitSuite {
	host, _ := os.Hostname()
	s := junitSuite{Name: "wireproof replay", Tests: len(outcomes), Time: junitTime(run.Elapsed), Timestamp: junitTimestamp(run.Started), Hostname: host}
	for _, o := range outcomes {
		path := filepath.ToSlash(o.ref.Path)
		c := junitCase{Name: path, Classname: "wireproof.replay", Time: junitTime(o.dur)}
		if o.res != nil && o.res.Scenario != "" {
			c.Classname += "." + o.res.Scenario // a plain recording has none
		}
		switch {
		case o.err != nil:
			s.Errors++
			st := errorStatus(o.err)
			c.Error = &junitFailure{Message: string(st) + " bundle", Type: string(st), Text: o.err.Error()}
		case o.skipped() && o.passed():
			s.Skipped++
			c.Skipped = &junitSkipped{Message: "no verification run to check (a plain recording)"}
		case o.notApplicable() && o.passed():
			s.Skipped++
			c.Skipped = &junitSkipped{Message: triage.NotApplicableText(o.res.Verdict)}
		case !o.passed():
			s.Failures++
			c.Failure, c.SystemOut = junitFailureOf(o, path)
		default:
			if suites := triage.SuitesLine(o.res.Verdict); suites != "" {
				c.SystemOut = "suites: " + suites + "\n"
			}
		}
		s.Cases = append(s.Cases, c)
	}
	return s
}

// junitFailureOf is a failed bundle's failure (the deciding check, then
// every failed suite's) and its system-out: the suites' statuses and a
// `look:` command per failed suite.
func junitFailureOf(o replayOutcome, path string) (*junitFailure, string) {
	f := &junitFailure{Type: string(o.outcome())}
	var out strings.Builder
	if vf := o.res.Verdict.Failure; vf != nil {
		f.Message = vf.Message
		f.Type = vf.Check
	}
	if suites := triage.SuitesLine(o.res.Verdict); suites != "" {
		f.Text = "suites: " + suites + "\n"
		out.WriteString(f.Text)
	}
	for _, st := range triage.FailedSuites(o.res.Verdict) {
		vf := st.Failure
		f.Text += fmt.Sprintf("\nsuite: %s\ncheck: %s\nmessage: %s\nseq: %d\nthread: %s\nrun: %s\nexpected: %s\nseen: %s\n", st.Suite, vf.Check, vf.Message, vf.Seq, vf.ThreadID, vf.RunID, vf.Expected, vf.Seen)
		if vf.Diff != "" {
			f.Text += "diff (-want +got):\n" + vf.Diff
		}
		fmt.Fprintf(&out, "%s: %s @seq %d: %s\nlook: wireproof inspect %s --around %d\n", st.Suite, vf.Check, vf.Seq, vf.Message, path, vf.Seq)
	}
	if o.outcome() == replay.Diverged {
		if f.Message == "" {
			f.Message = "replayed verdict diverged from the live verdict"
		}
		if f.Type == "" {
			f.Type = string(replay.Diverged)
		}
		f.Text += "verdict diff (-recorded +replayed):\n" + o.res.Diff
	}
	return f, out.String()
}

func writeJUnit(path string, outcomes []replayOutcome, run junitRun) error {
	b, err := xml.MarshalIndent(buildJUnit(outcomes, run), "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	return os.WriteFile(path, b, 0o644)
}
