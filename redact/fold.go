package redact

import "slices"

// A Fold joins the texts a stream of messages carries as deltas (the shapes
// Deltas recognises) as a reader folding them reads them: the reader's side
// of Deltas, for tools that look for secrets in what was recorded before
// Deltas existed (wireproof scan). Each message is added with a position of
// the caller's (a bundle event's seq); a text is handed to the callback when
// it ends (its stop, done or completed event) or at Flush.
//
// A Fold is not safe for concurrent use.
type Fold struct {
	open   map[string]*Folded
	done   func(*Folded)
	shapes []deltaShape // parseDelta's, reused
}

// Folded is one text joined from its pieces.
type Folded struct {
	Key  string   // what the pieces were keyed by (an index, an item)
	Text []byte   // the pieces joined
	At   []uint64 // the position each piece was added with
	Off  []int    // where each piece begins in Text

	group, family string
}

// Pieces reports how many pieces (of one byte or more) the bytes
// Text[start:end] span.
func (f *Folded) Pieces(start, end int) int {
	n := 0
	for k := f.piece(start); k < len(f.Off) && f.Off[k] < end; k++ {
		if f.size(k) > 0 {
			n++
		}
	}
	return n
}

// piece returns the last piece that begins at or before Text[i].
func (f *Folded) piece(i int) int {
	k, _ := slices.BinarySearch(f.Off, i+1)
	return max(0, k-1)
}

func (f *Folded) size(k int) int {
	if k+1 < len(f.Off) {
		return f.Off[k+1] - f.Off[k]
	}
	return len(f.Text) - f.Off[k]
}

// Position returns the position of the piece that holds Text[i].
func (f *Folded) Position(i int) uint64 { return f.At[f.piece(i)] }

// NewFold returns a Fold that hands each text to done when it ends.
func NewFold(done func(*Folded)) *Fold { return &Fold{open: map[string]*Folded{}, done: done} }

// Add takes the next message of the stream, added at position at.
func (f *Fold) Add(msg []byte, at uint64) {
	f.shapes = parseDelta(f.shapes[:0], msg, len(f.open) > 0)
	for _, sh := range f.shapes {
		switch {
		case sh.key != "":
			t := f.open[sh.key]
			if t == nil {
				t = &Folded{Key: sh.key, group: sh.group, family: sh.family}
				f.open[sh.key] = t
			}
			t.At = append(t.At, at)
			t.Off = append(t.Off, len(t.Text))
			t.Text = append(t.Text, sh.val...)
		case sh.isEnd():
			for _, k := range f.sortedKeys() {
				if t := f.open[k]; sh.ends(k, t.group, t.family) {
					delete(f.open, k)
					f.done(t)
				}
			}
		}
	}
}

// Flush hands on every text still open, in the order of their keys.
func (f *Fold) Flush() {
	for _, k := range f.sortedKeys() {
		t := f.open[k]
		delete(f.open, k)
		f.done(t)
	}
}

func (f *Fold) sortedKeys() []string {
	keys := make([]string, 0, len(f.open))
	for k := range f.open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
