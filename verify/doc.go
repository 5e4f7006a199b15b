// Package verify is wireproof's live driver. It runs the background-delivery
// scenarios of a T3-compatible orchestration server (idle, active, native,
// nested) and the restart durability check, the way the reference live verifier
// does, with every byte going through the recorder: the server process and its
// logs, the HTTP and WebSocket traffic through the recording proxy, and the gate
// (the controlled local dependency the child's work fetches).
//
// The driver does not judge from its own view. The recorder hands every event,
// in sequence order, to a replay.Engine subscribed to it: the verdict the driver
// writes into the bundle is the one replay recomputes from the file. The driver
// only acts on what the engine reports (release the gate, read the nested child,
// restart the server) and writes marks for facts that are not on the wire (the
// run's secret and thread, a deadline, an interrupt).
//
// A single run (Run) writes one bundle and one verdict file. A suite (RunSuite:
// scenario "all" or more than one repetition) isolates each run in its own child
// process and writes results.json.
package verify
