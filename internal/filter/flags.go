package filter

import (
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/bundle"
)

// The error flags: what in a bundle went wrong, whichever check it decides.
// Triage, the report, the viewer and inspect classify with the functions
// here, so a flag means the same everywhere.
const (
	FlagExit        = "exit"        // a process exited non-zero or by a signal
	FlagStderr      = "stderr"      // a line a process wrote to stderr
	FlagHTTP        = "http"        // an HTTP answer 4xx or 5xx, or an exchange that ended in error
	FlagFailed      = "failed"      // an RPC call that ended in failure or a defect
	FlagUnanswered  = "unanswered"  // an RPC call never answered (unknown, or open at the end)
	FlagDecode      = "decode"      // a message no decoder could read, or a protocol violation
	FlagConformance = "conformance" // the event a failing check was decided at
)

// FlagNames lists the flags in the order they are shown.
var FlagNames = []string{FlagExit, FlagStderr, FlagHTTP, FlagFailed, FlagUnanswered, FlagDecode, FlagConformance}

// politeStop are the signals that ask a process to stop: a provider the
// server stops with one has not failed.
var politeStop = map[string]bool{"SIGTERM": true, "SIGINT": true, "SIGHUP": true, "terminated": true, "interrupt": true, "hangup": true}

// eventFlag is the flag an event carries by itself, with a few words of
// why; "" when none. signalled: wireproof had sent the process a signal, so
// its death by one is the stop it asked for. The flags of calls, decode
// errors and checks come from the decoders and the verdict (CallFlag).
func eventFlag(ev *bundle.Event, signalled bool) (flag, why string) {
	switch ev.Kind {
	case bundle.KindProcExit:
		switch {
		case ev.Name != "" && !signalled && !politeStop[ev.Name]:
			return FlagExit, "killed by " + ev.Name
		case ev.Err != "" && !signalled:
			return FlagExit, ev.Err
		case ev.Name == "" && ev.Code != 0:
			return FlagExit, "exit status " + strconv.Itoa(ev.Code)
		}
	case bundle.KindProcLog:
		if ev.Type == bundle.TypeStderr {
			return FlagStderr, "stderr"
		}
	case bundle.KindHTTPResponse:
		if ev.Status >= 400 {
			return FlagHTTP, "HTTP " + strconv.Itoa(ev.Status)
		}
	case bundle.KindHTTPEnd:
		if ev.Err != "" {
			return FlagHTTP, ev.Err
		}
	case bundle.KindWSError:
		return FlagDecode, ev.Err
	}
	return "", ""
}

// CallFlag is the flag of a call that ended with outcome: failed or
// unanswered; "" for a success, and for a call the client interrupted
// (outcome interrupted, or a failure whose cause is only the interruption,
// onlyInterrupt): a stream ended so is the client's doing, not an error.
func CallFlag(outcome string, onlyInterrupt bool) string {
	switch outcome {
	case "failure", "defect":
		if onlyInterrupt {
			return ""
		}
		return FlagFailed
	case "unknown", "open":
		return FlagUnanswered
	}
	return ""
}

// FlagText is a flag's line: why it was raised and the event's summary,
// each said once.
func FlagText(why, summary string) string {
	switch {
	case strings.Contains(why, summary):
		return why
	case strings.Contains(summary, why):
		return summary
	}
	return why + ": " + summary
}
