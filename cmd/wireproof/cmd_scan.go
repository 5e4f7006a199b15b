package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/credscan"
	"github.com/wireproof/wireproof/internal/regfile"
	"github.com/wireproof/wireproof/redact"
)

// scanOptions are the flags of `wireproof scan`.
type scanOptions struct {
	JSON    bool
	Secrets []string // --redact: secrets to look for in every spelling

	given *redact.Set // Secrets'

	stdout, stderr io.Writer
}

// scanText are the derived files scan reads as text, line by line: verdicts,
// results, the report, the HAR export, artifacts written beside a run, and
// in a workspace kept by verify --keep-workspace the real Claude CLI's
// transcripts and MCP logs (.jsonl).
var scanText = []string{".json", ".ndjson", ".jsonl", ".har", ".html", ".htm", ".txt", ".log", ".patch", ".md"}

// newScanCommand builds `wireproof scan`.
func newScanCommand(g *globalOptions) *cobra.Command {
	var opts scanOptions
	cmd := &cobra.Command{
		Use:   "scan [--json] [--redact SECRET]... BUNDLE|DIR...",
		Short: "Look for credential-looking strings in bundles and their derived files",
		Long: `scan reads each bundle (every event, decompressed, and its header) and the
files derived from runs (verdict.json, results.json, report HTML, HAR and other
.json/.ndjson/.jsonl/.html/.har/.txt/.log/.patch/.md files) and lists the strings that look like
credentials: keys in known formats (sk-..., sk-ant-..., ghp_..., AKIA...,
xox..., AIza..., JWTs, private keys), values given to credential names
(*_API_KEY=..., "password": ..., Authorization: Bearer ...) and long
high-entropy tokens. A text streamed as deltas (a model's answer in
server-sent events, a provider's stdio lines, WebSocket messages) is also read
joined per connection, so a credential split across events is found too
(event "deltas"). The "[REDACTED]" placeholder never counts. Run it before
you attach evidence to an issue.

--redact SECRET (repeatable; the values given to record --redact, or any you
know) also looks for those secrets, whatever they look like, in every
spelling the recorder redacts (JSON- and URL-escaped, base64, ...), kind
"given-secret": in a bundle whose recorder was killed before it closed, a
secret streamed in pieces or learned late can be left in what it wrote.

Each finding names the file, the bundle event's seq (or the line of a text
file), what it looks like and an excerpt with the value masked: a finding is
never printed whole. --json prints one JSON object per finding.

A directory is walked (symbolic links to directories are followed at the top).
Exit 0 when nothing was found, 1 when anything was, 2 for a usage error, 3 when
a path or a bundle could not be read, 7 when a bundle is damaged (what it holds
before the damage is scanned; the other paths are still scanned, and the
summary counts only the files read in full).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runScan(cmd.Context(), opts, args)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object per finding (NDJSON)")
	cmd.Flags().StringArrayVar(&opts.Secrets, "redact", nil, "also look for this secret, in every spelling the recorder redacts (repeatable)")
	return cmd
}

// scanFinding is one credential-looking string, as scan prints it.
type scanFinding struct {
	File    string `json:"file"`
	Seq     *int64 `json:"seq,omitempty"`   // the bundle event (0: the header)
	Event   string `json:"event,omitempty"` // its kind
	Line    int    `json:"line,omitempty"`  // the line of a text file
	Kind    string `json:"kind"`
	Excerpt string `json:"excerpt"`
}

func runScan(ctx context.Context, opts scanOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	opts.given = redact.New(opts.Secrets, nil).Snapshot()
	out := bufio.NewWriter(opts.stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	found, files := 0, 0
	var unreadable []error
	report := func(f scanFinding) {
		found++
		if opts.JSON {
			_ = enc.Encode(f)
			return
		}
		where := f.File
		switch {
		case f.Seq != nil:
			where += fmt.Sprintf("  seq %d %s", *f.Seq, f.Event)
		case f.Line > 0:
			where += fmt.Sprintf(":%d", f.Line)
		}
		fmt.Fprintf(out, "%s  %s  %s\n", where, f.Kind, f.Excerpt)
	}
	for _, arg := range args {
		if err := ctx.Err(); err != nil {
			return interruptedError{err}
		}
		paths, err := scanPaths(arg)
		if err != nil {
			unreadable = append(unreadable, err)
			continue
		}
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return interruptedError{err}
			}
			var err error
			if strings.HasSuffix(p, ".zst") {
				err = scanBundle(ctx, p, opts.given, report)
			} else {
				err = scanTextFile(ctx, p, opts.given, report)
			}
			if err != nil {
				if ctx.Err() != nil {
					return interruptedError{ctx.Err()}
				}
				unreadable = append(unreadable, err)
				continue
			}
			files++
		}
	}
	out.Flush()
	// A file that could not be read (or not to its end) is not counted as
	// scanned: a clean summary never stands for a file scan did not read.
	var notRead string
	if len(unreadable) > 0 {
		notRead = fmt.Sprintf("; %d could not be read in full", len(unreadable))
	}
	if found > 0 {
		fmt.Fprintf(opts.stderr, "%d credential-looking string(s) in %d file(s) scanned%s: check them before you share these files\n", found, files, notRead)
	} else {
		fmt.Fprintf(opts.stderr, "no credential-looking string in %d file(s) scanned%s\n", files, notRead)
	}
	if len(unreadable) > 0 {
		for _, err := range unreadable[1:] {
			fmt.Fprintf(opts.stderr, "wireproof: %v\n", err)
		}
		return unreadableError{unreadable[0]}
	}
	if found > 0 {
		return checkFailedError{fmt.Sprintf("scan found %d credential-looking string(s)", found)}
	}
	return nil
}

// scanPaths lists the files scan reads for arg: arg itself, or the bundles
// and text files under a directory (arg may be a symbolic link to one), in
// sorted order.
func scanPaths(arg string) ([]string, error) {
	fi, err := os.Stat(arg) // follows a symbolic link
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{arg}, nil
	}
	root, err := filepath.EvalSymlinks(arg)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(p))
		if ext == ".zst" || slices.Contains(scanText, ext) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.Join(arg, rel))
		}
		return nil
	})
	return out, err
}

// scanBundle scans a bundle's header and every event's line as written
// (decompressed), and the texts its events stream as deltas joined (see
// deltaScan).
func scanBundle(ctx context.Context, path string, given *redact.Set, report func(scanFinding)) error {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	h, _ := json.Marshal(r.Header())
	scanBytes(h, given, func(kind, excerpt string) {
		seq := int64(0)
		report(scanFinding{File: path, Seq: &seq, Event: "header", Kind: kind, Excerpt: excerpt})
	})
	ds := newDeltaScan(path, given, report)
	for ev, err := range r.Events(ctx) {
		if err != nil {
			ds.flush()
			return err
		}
		seq := int64(ev.Seq)
		scanBytes(r.Line(), given, func(kind, excerpt string) {
			report(scanFinding{File: path, Seq: &seq, Event: string(ev.Kind), Kind: kind, Excerpt: excerpt})
		})
		ds.event(ev)
	}
	ds.flush()
	return nil
}

// deltaScan joins the texts a bundle's connections stream as deltas (a
// model's answer in server-sent events, a provider's stdio lines, WebSocket
// messages; redact.Fold) and scans each joined text: a credential split
// across two or more events, which no event's line shows whole, is reported
// at the seq of the event its first piece is in, as event "deltas". A
// bundle recorded before the recorder joined deltas may hold one.
type deltaScan struct {
	path   string
	given  *redact.Set
	report func(scanFinding)
	folds  map[string]*redact.Fold // per connection and direction
	sse    map[string]*sseFrame    // per connection: a response body of server-sent events
}

// sseFrame is the unfinished event of a server-sent event body and the seq
// of the body event it began in.
type sseFrame struct {
	buf []byte
	at  uint64
}

func newDeltaScan(path string, given *redact.Set, report func(scanFinding)) *deltaScan {
	return &deltaScan{path: path, given: given, report: report, folds: map[string]*redact.Fold{}, sse: map[string]*sseFrame{}}
}

func (d *deltaScan) fold(key string) *redact.Fold {
	f := d.folds[key]
	if f == nil {
		f = redact.NewFold(d.scan)
		d.folds[key] = f
	}
	return f
}

func (d *deltaScan) event(ev *bundle.Event) {
	key := ev.Conn + " " + string(ev.Dir)
	switch ev.Kind {
	case bundle.KindStdioLine, bundle.KindWSMessage:
		d.fold(key).Add(ev.Body.Data, ev.Seq)
	case bundle.KindHTTPResponse:
		if mt, _, _ := strings.Cut(ev.Header.Get("Content-Type"), ";"); strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
			d.sse[ev.Conn] = &sseFrame{}
		}
	case bundle.KindHTTPBody:
		fr := d.sse[ev.Conn]
		if fr == nil || ev.Dir != bundle.DirServerToClient {
			return
		}
		if len(fr.buf) == 0 {
			fr.at = ev.Seq
		}
		fr.buf = append(fr.buf, ev.Body.Data...)
		for {
			n := redact.EventLen(fr.buf)
			if n < 0 {
				break
			}
			d.fold(key).Add(fr.buf[:n], fr.at)
			fr.buf, fr.at = fr.buf[n:], ev.Seq
		}
	case bundle.KindHTTPEnd:
		if fr := d.sse[ev.Conn]; fr != nil {
			if len(fr.buf) > 0 {
				d.fold(ev.Conn+" "+string(bundle.DirServerToClient)).Add(fr.buf, fr.at)
			}
			delete(d.sse, ev.Conn)
		}
	}
}

// flush scans the texts still open, in a stable order.
func (d *deltaScan) flush() {
	keys := make([]string, 0, len(d.folds))
	for k := range d.folds {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.folds[k].Flush()
	}
}

// scan reports the findings of a joined text that span two pieces or more
// (one within a piece is its event's own finding).
func (d *deltaScan) scan(t *redact.Folded) {
	fs := findings(t.Text, d.given)
	for _, f := range fs {
		if t.Pieces(f.Start, f.End) < 2 {
			continue
		}
		seq := int64(t.Position(f.Start))
		d.report(scanFinding{File: d.path, Seq: &seq, Event: "deltas", Kind: f.Kind, Excerpt: credscan.Excerpt(t.Text, fs, f, 24)})
	}
}

// scanTextFile scans a text file line by line. What is not a regular file
// (a named pipe, a device) is refused before it is opened: a FIFO would
// block scan until something wrote to it, and /dev/urandom never ends.
func scanTextFile(ctx context.Context, path string, given *redact.Set, report func(scanFinding)) error {
	f, err := regfile.Open(path)
	if err != nil {
		var nr *regfile.NotRegularError
		if errors.As(err, &nr) {
			return fmt.Errorf("%s is %s, not a regular file: scan reads bundles and text files only", path, nr.What)
		}
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxScanLine)
	n := 1
	for ; sc.Scan(); n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return interruptedError{ctx.Err()}
		}
		scanBytes(sc.Bytes(), given, func(kind, excerpt string) {
			report(scanFinding{File: path, Line: n, Kind: kind, Excerpt: excerpt})
		})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line longer than %d MiB: scan could not read the rest of the file", path, n, maxScanLine>>20)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// maxScanLine bounds a text file's line.
const maxScanLine = 64 << 20

// scanBytes reports every finding of b with its masked excerpt.
func scanBytes(b []byte, given *redact.Set, report func(kind, excerpt string)) {
	fs := findings(b, given)
	for _, f := range fs {
		report(f.Kind, credscan.Excerpt(b, fs, f, 24))
	}
}

// findings are the credential-looking strings of b and the occurrences of
// the given secrets in it (kind "given-secret"), in order of their start; a
// credential-looking string that is a given secret is reported once, as
// given.
func findings(b []byte, given *redact.Set) []credscan.Finding {
	fs := credscan.Find(b)
	ranges := given.Find(b)
	if len(ranges) == 0 {
		return fs
	}
	var out []credscan.Finding
	for _, r := range ranges {
		out = append(out, credscan.Finding{Kind: "given-secret", Start: r[0], End: r[1]})
	}
	for _, f := range fs {
		if !slices.ContainsFunc(ranges, func(r [2]int) bool { return f.Start < r[1] && r[0] < f.End }) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b credscan.Finding) int { return a.Start - b.Start })
	return out
}
