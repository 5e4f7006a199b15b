package anthropic

import (
	"bufio"
	"bytes"
	"io"
)

// ReadEvents splits an event-stream body into its events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html: event
// and data fields, comments, an event dispatched at a blank line) and calls
// fn with each event's name ("message" when it had none) and data (its data
// lines joined by newlines). It stops at fn's first error or the body's end;
// an event not ended by a blank line is not dispatched.
func ReadEvents(r io.Reader, fn func(name string, data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	sc.Split(scanSSELines)
	var name string
	var data []byte
	has := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if has {
				if name == "" {
					name = "message"
				}
				if err := fn(name, bytes.TrimSuffix(data, []byte("\n"))); err != nil {
					return err
				}
			}
			name, data, has = "", nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			data = append(append(data, value...), '\n')
			has = true
		}
	}
	return sc.Err()
}

// scanSSELines splits at \r\n, \n or \r.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\r' {
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if !atEOF {
				return 0, nil, nil // a \n may follow
			}
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
