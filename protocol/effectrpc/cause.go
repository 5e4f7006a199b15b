package effectrpc

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Cause is an Exit failure cause flattened: the v4 flat array and the v3 tree
// (Empty, Fail, Die, Interrupt, Sequential, Parallel) decode to the same value.
type Cause struct {
	Fails      []json.RawMessage // typed errors (Fail.error)
	Dies       []json.RawMessage // defects (Die.defect)
	Interrupts []string          // fiber ids of Interrupt (as JSON text)
}

// Interrupted reports whether the cause is only interruption.
func (c Cause) Interrupted() bool {
	return len(c.Interrupts) > 0 && len(c.Fails) == 0 && len(c.Dies) == 0
}

// String is a one-line summary: "Fail {...}; Die {...}; Interrupt 27".
func (c Cause) String() string {
	var parts []string
	for _, f := range c.Fails {
		parts = append(parts, "Fail "+clip(f, 200))
	}
	for _, d := range c.Dies {
		parts = append(parts, "Die "+clip(d, 200))
	}
	for _, i := range c.Interrupts {
		parts = append(parts, "Interrupt "+i)
	}
	if len(parts) == 0 {
		return "Empty"
	}
	return strings.Join(parts, "; ")
}

type causeNode struct {
	Tag     string          `json:"_tag"`
	Error   json.RawMessage `json:"error"`
	Defect  json.RawMessage `json:"defect"`
	FiberID json.RawMessage `json:"fiberId"`
	Left    json.RawMessage `json:"left"`
	Right   json.RawMessage `json:"right"`
}

// maxCauseDepth bounds recursion into v3 cause trees from hostile input.
const maxCauseDepth = 256

// DecodeCause decodes a v4 flat cause array or a v3 cause tree.
func DecodeCause(raw json.RawMessage) (Cause, error) {
	var c Cause
	err := c.add(raw, 0)
	return c, err
}

func (c *Cause) add(raw json.RawMessage, depth int) error {
	if depth > maxCauseDepth {
		return fmt.Errorf("cause nested deeper than %d", maxCauseDepth)
	}
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	if trimmed[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("cause array: %w", err)
		}
		for _, it := range items {
			if err := c.add(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	var n causeNode
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("cause: %w", err)
	}
	switch n.Tag {
	case "Empty":
	case "Fail":
		c.Fails = append(c.Fails, n.Error)
	case "Die":
		c.Dies = append(c.Dies, n.Defect)
	case "Interrupt":
		c.Interrupts = append(c.Interrupts, fiberText(n.FiberID))
	case "Sequential", "Parallel":
		if err := c.add(n.Left, depth+1); err != nil {
			return err
		}
		return c.add(n.Right, depth+1)
	default:
		return fmt.Errorf("unknown cause tag %q", n.Tag)
	}
	return nil
}

// fiberText renders a fiber id: v4 sends a number, v3 an object.
func fiberText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "?"
	}
	return clip(raw, 80)
}

// clip shortens b to at most n bytes for messages.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
