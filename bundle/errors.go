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

// DamagedError says a bundle's stored bytes are not what its writer wrote:
// a zstd frame whose checksum or structure is wrong, a checkpoint that does
// not match the bytes before it, a trailer that does not match the events,
// data after the end of a closed bundle, or a closed (sealed) file whose
// frames run past its end. A file merely cut short (a recorder killed
// mid-write) is not damaged: it reads as truncated (Reader.Truncated).
//
// Offset is the stored byte where the damage was found (-1 when it is not
// about one place).
type DamagedError struct {
	Path   string
	Offset int64
	Msg    string
}

func (e *DamagedError) Error() string {
	name := e.Path
	if name == "" {
		name = "bundle"
	}
	if e.Offset < 0 {
		return fmt.Sprintf("%s is damaged: %s", name, e.Msg)
	}
	return fmt.Sprintf("%s is damaged: at stored byte %d, %s", name, e.Offset, e.Msg)
}
