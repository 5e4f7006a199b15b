package record

import "github.com/wireproof/wireproof/bundle"

// Emitter receives events in the order they happen; Recorder implements it.
//
// The process supervisor, the gate and the stdio taps of this package only
// observe: they build events and hand them to an Emitter, which assigns the
// sequence number and time and writes them. An Emitter must be safe for
// concurrent use, because stdout, stderr, the gate's handlers and the taps all
// emit from their own goroutines. Events must not be modified once emitted.
type Emitter interface {
	Emit(ev *bundle.Event) (uint64, error)
}
