//go:build !race

package redact

const raceEnabled = false
