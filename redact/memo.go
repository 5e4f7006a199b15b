package redact

import "github.com/wireproof/wireproof/internal/repeat"

// cleanTexts remembers, by Set, the last texts it found nothing in
// (internal/repeat). A Set never changes (a secret learned makes a new one)
// and what it finds depends on the text alone, so a text equal to one the
// same Set found nothing in holds nothing. Only a text with nothing found
// is remembered: a text that holds a secret is searched every time, so the
// memo can never hide one.
var cleanTexts repeat.Memo[*Set]

// findTextMemo is findText, answered by a comparison for a text that
// repeats the last one s found nothing in on this processor.
func (s *Set) findTextMemo(b []byte) []span {
	if s.m == nil {
		return nil
	}
	var spans []span
	if cleanTexts.Passes(s, b, func(b []byte) bool { spans = s.findText(b); return len(spans) == 0 }) {
		return nil
	}
	return spans
}

// nameFree remembers, by fieldSet, the last texts in which it found no
// token field name (internal/repeat). A fieldSet never changes after
// newFieldSet, so a text equal to one without a name has none: a polled
// body is searched for names once, not at every poll. A text that holds a
// name is searched every time.
var nameFree repeat.Memo[*fieldSet]

// hintMemo is hint, answered by a comparison for a text that repeats the
// last one fs found no name in on this processor.
func (fs *fieldSet) hintMemo(b []byte) bool {
	return !nameFree.Passes(fs, b, func(b []byte) bool { return !fs.hint(b) })
}
