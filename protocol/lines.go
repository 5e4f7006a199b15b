package protocol

import (
	"bytes"

	"github.com/wireproof/wireproof/bundle"
)

// The recorder cuts a stdio line longer than its cap (record.MaxLineBytes,
// 1 MiB) into several stdio.line events, each but the last marked
// {"partial":true}: a Codex app-server's item/completed carrying a command's
// output (Codex keeps about 1 MiB of it) arrives so. The stdio decoders join the pieces back
// into the line before they decode it, so a long message is one message,
// decoded at the event that ends it.

// maxJoinedLine caps a line joined from pieces: past it the line is not
// decoded (a decode error says so), so memory stays bounded.
const maxJoinedLine = 64 << 20

// linePieces holds, per direction, the pieces of a line not yet ended.
type linePieces struct {
	buf  [2][]byte
	over [2]bool
}

// isPiece reports a stdio.line the recorder cut at its cap: more of its
// line follows in the next event of its direction.
func isPiece(ev *bundle.Event) bool { return bytes.Contains(ev.Attrs, []byte(`"partial":true`)) }

// join takes a stdio.line of its connection. It returns the whole line ev
// ends (ev's own bytes when it is not the end of a cut line) and true, or
// false while ev is a piece of a longer line. over says the joined line was
// longer than maxJoinedLine and its bytes past that were dropped.
func (p *linePieces) join(ev *bundle.Event) (line []byte, whole, over bool) {
	i := dirIdx(ev.Dir)
	if p.buf[i] == nil && !p.over[i] && !isPiece(ev) {
		return ev.Body.Data, true, false
	}
	if len(p.buf[i])+len(ev.Body.Data) > maxJoinedLine {
		p.over[i] = true
	} else if !p.over[i] {
		p.buf[i] = append(p.buf[i], ev.Body.Data...)
	}
	if isPiece(ev) {
		return nil, false, false
	}
	line, over = p.buf[i], p.over[i]
	p.buf[i], p.over[i] = nil, false
	return line, true, over
}
