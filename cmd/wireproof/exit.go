package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/objstore"
)

// Exit codes. Every verb returns an error and this file alone maps errors to
// codes; docs/cli.md lists them.
//
//	0    success: every check passed (verify, replay), the output was written
//	1    a check failed, a replay diverged, two runs differ (diff), or an
//	     error that fits no other code
//	2    usage error: a bad flag, argument or flag value (nothing was done)
//	3    a bundle could not be read (missing, not zstd, corrupt, a zstd window
//	     above the reader's cap)
//	4    playback --strict: a request matched nothing recorded, or a recorded
//	     request was never played; model --cassette --strict and verify
//	     --model-cassette --strict: a model call matched no recorded one
//	5    object storage could not be used (credentials refused, endpoint
//	     unreachable, an upload failed); the files are kept in the spool
//	6    an output could not be written: the bundle of record or verify,
//	     verify's --out directory, verdict or results.json, report -o, export
//	     -o, index -o, replay --junit; or one that would replace a bundle (the
//	     input, or any zstd file) without --force
//	7    a bundle is damaged: its stored bytes are not what its writer wrote
//	     (a checksum, checkpoint or trailer that does not match, data after
//	     its end); a bundle merely cut short is read up to the cut, exit 0
//	8    verify: nothing was verified: every run's scenario cannot apply to
//	     its provider (verdict status not-applicable, with the reason), e.g.
//	     --scenario native with the Codex CLI; a suite in which some runs
//	     passed and the others did not apply exits 0 (replay of such a
//	     bundle: 0, it reproduced and nothing failed)
//	130  interrupted by SIGINT or SIGTERM (what was recorded is closed cleanly)
//
// The verbs that serve until stopped, view and playback, end normally on
// SIGINT or SIGTERM: that is how they are stopped, so they exit 0 after
// their summary (playback --strict: 4 if anything missed or was never
// played); 130 only if the signal comes before they serve (playback still
// loading its bundle).
//
// record -- CMD exits with the command's status instead (128+N if a signal
// N killed it, 127 if it could not be started) when recording itself went well;
// so does the hidden provider wrap CLI, with the real CLI's status.
const (
	exitOK          = 0
	exitCheckFailed = 1
	exitUsage       = 2
	exitUnreadable  = 3
	// exitPlaybackMissed: playback --strict served a request that matched
	// nothing recorded, or a recorded request was never played.
	exitPlaybackMissed = 4
	// exitStorage: object storage could not be used (credentials refused,
	// endpoint unreachable) or an upload failed; the run's files are kept
	// in the local spool and the message says where.
	exitStorage = 5
	exitOutput  = 6
	// exitDamaged: a bundle's stored bytes are not what its writer wrote
	// (*bundle.DamagedError).
	exitDamaged = 7
	// exitNotApplicable: verify verified nothing, every run's scenario not
	// applying to its provider (notApplicableError).
	exitNotApplicable = 8
	exitInterrupted   = 130
)

// usageError is a bad flag, argument or flag value. Every usage error is one
// of these, whatever found it: flag parsing (the root's FlagErrorFunc), an
// argument count (explainArgs wraps every verb's Args), an unknown verb (the
// root's Args) or a verb's own checks. No message is matched by its text.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// unreadableError is a bundle that cannot be read (missing, not zstd, corrupt).
type unreadableError struct{ err error }

func (e unreadableError) Error() string { return e.err.Error() }
func (e unreadableError) Unwrap() error { return e.err }

// outputError is an output the user asked for that could not be written. It
// names the user's path, never an internal temporary file.
type outputError struct {
	path string
	err  error
}

func (e outputError) Error() string {
	return fmt.Sprintf("cannot write %s: %s", e.path, plainCause(e.err))
}
func (e outputError) Unwrap() error { return e.err }

// plainCause is err without the paths of an *fs.PathError or an
// *os.LinkError: they are the temporary file an atomic write goes through,
// or the user's own path, which outputError names already.
func plainCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError // a rename from the temporary file
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// checkFailedError means the command ran but a check failed. Its message has
// already been printed as part of the command's output.
type checkFailedError struct{ msg string }

func (e checkFailedError) Error() string { return e.msg }

// notApplicableError means verify verified nothing: every run's scenario
// cannot apply to its provider. What and why has been printed.
type notApplicableError struct{ msg string }

func (e notApplicableError) Error() string { return e.msg }

// interruptedError means the command stopped on SIGINT or SIGTERM.
type interruptedError struct{ err error }

func (e interruptedError) Error() string { return "interrupted" }
func (e interruptedError) Unwrap() error { return e.err }

// playbackMissedError is playback --strict ending with misses or recorded
// requests never played. The report has been printed.
// A model cassette's (model --cassette, verify --model-cassette) names its
// verb and counts only misses.
type playbackMissedError struct {
	misses, unplayed int
	verb             string // "" for playback
}

func (e playbackMissedError) Error() string {
	if e.verb != "" {
		return fmt.Sprintf("%s --strict: %d model call(s) matched no recorded call", e.verb, e.misses)
	}
	return fmt.Sprintf("playback --strict: %d missed, %d never played", e.misses, e.unplayed)
}

// damagedError names the damaged bundles of a verb that reads many (replay,
// index); one bundle's *bundle.DamagedError maps to the same code.
type damagedError struct{ err error }

func (e damagedError) Error() string { return e.err.Error() }
func (e damagedError) Unwrap() error { return e.err }

// isDamaged reports an error about a damaged bundle.
func isDamaged(err error) bool {
	var de *bundle.DamagedError
	return errors.As(err, &de)
}

// errorStatus is how a bundle that could not be replayed or indexed is
// listed: damaged or unreadable.
func errorStatus(err error) assert.Status {
	if isDamaged(err) {
		return assert.StatusDamaged
	}
	return assert.StatusUnreadable
}

// exitStatusError passes a child's exit status through (record -- CMD).
type exitStatusError struct{ code int }

func (e exitStatusError) Error() string { return "command exited with a non-zero status" }

func exitCode(err error, interrupted bool) int {
	if err == nil {
		return exitOK
	}
	var (
		usage  usageError
		unread unreadableError
		failed checkFailedError
		na     notApplicableError
		intr   interruptedError
		status exitStatusError
		missed playbackMissedError
		store  storageError
		objerr *objstore.Error
		output outputError
		dmg    damagedError
		bdmg   *bundle.DamagedError
	)
	switch {
	case errors.As(err, &intr):
		return exitInterrupted
	case errors.As(err, &status):
		return status.code
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &store):
		return exitStorage
	case errors.As(err, &dmg), errors.As(err, &bdmg):
		return exitDamaged
	case errors.As(err, &unread):
		return exitUnreadable
	case errors.As(err, &objerr):
		return exitStorage
	case errors.As(err, &output):
		return exitOutput
	case errors.As(err, &failed):
		return exitCheckFailed
	case errors.As(err, &na):
		return exitNotApplicable
	case errors.As(err, &missed):
		return exitPlaybackMissed
	case interrupted:
		return exitInterrupted
	}
	return exitCheckFailed
}

// isSilent reports errors whose message the command printed already.
func isSilent(err error) bool {
	var failed checkFailedError
	var na notApplicableError
	var status exitStatusError
	return errors.As(err, &failed) || errors.As(err, &na) || errors.As(err, &status)
}
