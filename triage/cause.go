package triage

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// maxChainDepth bounds how deep a cause chain is followed in hostile input.
const maxChainDepth = 64

// causeText renders an Exit's failure cause whole: every Fail and Die, each
// with its error's chain of causes ({"_tag"|"name","message","cause"}), one
// error per line, the root last. Nothing is clipped: the root of a chain is
// usually the error that explains the failure
// (ProjectionStoreThreadNotFoundError under a repository error under the
// RPC's typed error). Bodies are already capped by MaxBody when they are kept.
func causeText(c *effectrpc.Cause) string {
	var lines []string
	for _, f := range c.Fails {
		lines = append(lines, chainLines("Fail", f)...)
	}
	for _, d := range c.Dies {
		lines = append(lines, chainLines("Die", d)...)
	}
	for _, i := range c.Interrupts {
		lines = append(lines, "Interrupt (fiber "+i+")")
	}
	if len(lines) == 0 {
		return "Empty"
	}
	return strings.Join(lines, "\n")
}

// chainLines renders one error and the causes under it:
//
//	Fail OrchestrationV2GetThreadProjectionError: cannot read the thread
//	  caused by ProjectionRepositoryError: query failed
//	  caused by ProjectionStoreThreadNotFoundError: no thread t1
//
// A value that is not an error object (a string defect, a number) is printed
// as its JSON.
func chainLines(kind string, raw json.RawMessage) []string {
	var lines []string
	prefix := kind + " "
	for depth := 0; len(raw) > 0 && depth < maxChainDepth; depth++ {
		line, next := errorLine(raw)
		lines = append(lines, prefix+line)
		prefix, raw = "  caused by ", next
	}
	if len(raw) > 0 {
		lines = append(lines, fmt.Sprintf("  … causes deeper than %d levels not shown", maxChainDepth))
	}
	return lines
}

// errorLine renders one error object as "name: message" and returns its
// cause, if it has one.
func errorLine(raw json.RawMessage) (string, json.RawMessage) {
	var e struct {
		Tag     string          `json:"_tag"`
		Name    string          `json:"name"`
		Message json.RawMessage `json:"message"`
		Cause   json.RawMessage `json:"cause"`
	}
	trimmed := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(trimmed, "{") || json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, nil
		}
		return trimmed, nil
	}
	name := e.Tag
	if name == "" {
		name = e.Name
	}
	var msg string
	if json.Unmarshal(e.Message, &msg) != nil {
		msg = string(e.Message)
	}
	cause := e.Cause
	if c := strings.TrimSpace(string(cause)); c == "" || c == "null" {
		cause = nil
	}
	switch {
	case name == "" && msg == "":
		// Not shaped like an error: show it as it is, with its cause apart.
		return trimmed, nil
	case name == "":
		return msg, cause
	case msg == "":
		return name, cause
	}
	return name + ": " + msg, cause
}
