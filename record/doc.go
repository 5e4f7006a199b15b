// Package record captures the wire traffic of a live run into an evidence
// bundle.
//
// Everything observed during a run (HTTP exchanges and WebSocket messages seen
// by the recording Proxy, the server process and its logs, the gate, stdio
// taps) becomes a bundle.Event handed to one Recorder. The Recorder redacts the
// event (see Options.Redact and package redact), appends it
// to the bundle writer, which assigns its sequence number and time, and queues
// the very same event to every Subscriber in sequence order. The live checks
// subscribe to the Recorder, so they judge exactly the stream that replay will
// read back from the file later.
//
// The Proxy is a reverse proxy in front of one upstream server: it relays every
// HTTP request and WebSocket connection, streams bodies and messages through
// without buffering them, and records them on the way.
package record
