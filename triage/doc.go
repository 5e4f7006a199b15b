// Package triage takes a recorded bundle apart for a person working out why a
// run failed: Load decodes it into a Timeline (HTTP exchanges with their
// bodies, WebSocket connections and their messages, RPC calls correlated from
// request to exit, gate, process and log events, marks, artifacts, the
// recorded and the replayed verdict), WriteHAR exports the wire traffic as a
// HAR 1.2 file that browsers' developer tools open, and WriteReport renders one
// self-contained HTML page that starts with the verdict.
//
// Output never depends on map order or the wall clock: every time shown is the
// bundle's header start plus the event's recorded offset.
package triage
