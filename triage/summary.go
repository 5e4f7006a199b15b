package triage

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/bundle"
)

// Summary says what one event is in a line (not clipped): the timeline, the
// report and the viewer all describe events this way. Payloads appear as
// text, at most 4 KiB of each.
func Summary(ev *bundle.Event) string {
	switch ev.Kind {
	case bundle.KindHeader:
		return "recording started"
	case bundle.KindHTTPRequest:
		return ev.Method + " " + ev.URL
	case bundle.KindHTTPResponse:
		return fmt.Sprintf("%d", ev.Status)
	case bundle.KindHTTPBody:
		return string(ev.Dir) + " " + payloadText(ev.Body)
	case bundle.KindHTTPEnd:
		s := fmt.Sprintf("end, %d bytes", ev.Size)
		if ev.Truncated {
			s += ", truncated"
		}
		if ev.Err != "" {
			s += ": " + ev.Err
		}
		return s
	case bundle.KindWSOpen:
		return "open " + ev.URL
	case bundle.KindWSMessage:
		return string(ev.Dir) + " " + payloadText(ev.Body)
	case bundle.KindWSClose:
		// No reason, no space: "close by s2c 1006: EOF".
		s := strings.TrimSpace(fmt.Sprintf("close by %s %d %s", ev.Dir, ev.Code, ev.Reason))
		if ev.Err != "" {
			s += ": " + ev.Err
		}
		return s
	case bundle.KindGateRequest:
		return ev.Method + " " + ev.URL
	case bundle.KindGateRelease:
		return fmt.Sprintf("release %s: %d %s", ev.URL, ev.Status, payloadText(ev.Body))
	case bundle.KindProcStart:
		return "start " + string(ev.Attrs)
	case bundle.KindProcReady:
		return "ready: " + payloadText(ev.Body)
	case bundle.KindProcSignal:
		return "signal " + ev.Name
	case bundle.KindProcExit:
		s := fmt.Sprintf("exit %d", ev.Code)
		if ev.Name != "" {
			s += " (" + ev.Name + ")"
		}
		if ev.Err != "" {
			s += ": " + ev.Err
		}
		return s
	case bundle.KindProcLog, bundle.KindStdioLine:
		return payloadText(ev.Body)
	case bundle.KindArtifact:
		return fmt.Sprintf("%s (%d bytes)", ev.Name, len(ev.Body.Data))
	case bundle.KindMark:
		return ev.Name + " " + payloadText(ev.Body)
	case bundle.KindVerdict:
		return "live verdict " + payloadText(ev.Body)
	}
	return string(ev.Kind)
}
