//go:build race

package redact

// raceEnabled: under the race detector sync.Pool drops what is put in it at
// random, so a pooled buffer may be allocated again.
const raceEnabled = true
