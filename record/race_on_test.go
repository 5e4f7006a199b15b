//go:build race

package record

// raceEnabled: the race detector slows byte loops tenfold or more, so the
// biggest payloads are scaled down under it.
const raceEnabled = true
