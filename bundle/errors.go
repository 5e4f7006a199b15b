package bundle

import "fmt"

// FormatError says why a bundle cannot be read: not zstd data, a bad or newer
// header, a line over the length cap, a broken line, a gap in seq, a t that
// goes backwards, or a trailer that does not match what came before it.
//
// With Line 0 the error is about the file as a whole and Msg continues a
// sentence whose subject is the file ("is not a wireproof bundle: not zstd
// data"); otherwise Msg describes that line.
type FormatError struct {
	Path string // the file, or ReaderOptions.Name; may be empty
	Line int    // 1-based line number, 0 for the file as a whole
	Msg  string
}

func (e *FormatError) Error() string {
	name := e.Path
	if name == "" {
		name = "bundle"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", name, e.Line, e.Msg)
	}
	return name + " " + e.Msg
}
