package synth

import "github.com/wireproof/wireproof/bundle"

// StrayExitID is the request id of the Exit WithStrayExit adds.
const StrayExitID = "999"

// WithStrayExit returns s with an Exit for a request never made (id 999 on
// ws1) right after the launch's Exit: the protocol-conformance suite fails
// it (answers-request), whatever the background-delivery suite decides, so
// a run can fail either suite or both. The events after it move one seq
// on, and so do their labels; s is not changed.
func WithStrayExit(s Script) Script {
	at := s.At[LabelLaunchExit]
	stray := bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText,
		T: s.Events[at].T, Body: bundle.Text([]byte(`{"_tag":"Exit","requestId":` + StrayExitID + `,"exit":{"_tag":"Success","value":null}}`))}
	out := Script{Events: make([]bundle.Event, 0, len(s.Events)+1), At: map[string]uint64{}}
	out.Events = append(out.Events, s.Events[:at+1]...)
	out.Events = append(out.Events, stray)
	out.Events = append(out.Events, s.Events[at+1:]...)
	for i := range out.Events {
		out.Events[i].Seq = uint64(i)
	}
	for name, seq := range s.At {
		if seq > at {
			seq++
		}
		out.At[name] = seq
	}
	out.At[LabelStrayExit] = at + 1
	return out
}

// LabelStrayExit is the seq of the Exit WithStrayExit adds.
const LabelStrayExit = "stray-exit"

// WriteRecorded writes s to a new bundle at path with the verdict the live
// driver would have recorded (Recorded, then WriteBundle).
func WriteRecorded(path string, s Script) error {
	evs, err := Recorded(s)
	if err != nil {
		return err
	}
	return WriteBundle(path, evs)
}
