// Package spool keeps runs bound for object storage on local disk until they
// are uploaded. A run records into a job directory of the spool as it would
// into any output directory (so a crash loses nothing that was written); the
// job's manifest (<id>.json beside the directory) names its destination and
// retention. When the run ends its files are uploaded and the job removed;
// a job left behind by a crash or a failed upload stays pending until
// `wireproof upload`, or the next run that writes to object storage, sends
// it. A job being written holds a lock on its manifest, so only finished or
// abandoned jobs are ever sent.
package spool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wireproof/wireproof/internal/filelock"
)

// Env names the variable that overrides the spool directory.
const Env = "WIREPROOF_SPOOL"

// DefaultDir is $WIREPROOF_SPOOL, else wireproof/spool under the user's cache
// directory ($XDG_CACHE_HOME or ~/.cache).
func DefaultDir() (string, error) {
	if d := os.Getenv(Env); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no spool directory: set %s or HOME: %w", Env, err)
	}
	return filepath.Join(c, "wireproof", "spool"), nil
}

// Spool is a directory of pending upload jobs.
type Spool struct{ Dir string }

// Open makes the spool directory if needed.
func Open(dir string) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return &Spool{Dir: dir}, nil
}

// Keep says which runs' files a job uploads.
type Keep string

const (
	KeepAll    Keep = "all"    // every run
	KeepFailed Keep = "failed" // only runs whose verdict is not passed
)

// ParseKeep checks a --keep value.
func ParseKeep(s string) (Keep, error) {
	switch Keep(s) {
	case KeepAll, KeepFailed:
		return Keep(s), nil
	}
	return "", fmt.Errorf("invalid --keep %q: want all or failed", s)
}

// Job is one run's (or suite's) files and where they go.
type Job struct {
	ID      string    `json:"id"`
	Dest    string    `json:"dest"` // s3://bucket/prefix the files go under
	Keep    Keep      `json:"keep"`
	Command string    `json:"command"` // what made it, for messages
	Created time.Time `json:"created"`

	dir  string // the files
	lock *os.File
}

// Dir is the directory the job's files are written into.
func (j *Job) Dir() string { return j.dir }

// Manifest is the path of the job's manifest.
func (j *Job) Manifest() string { return j.dir + ".json" }

// Begin creates a job and holds its lock until Release.
func (s *Spool) Begin(dest string, keep Keep, command string) (*Job, error) {
	var b [6]byte
	rand.Read(b[:])
	now := time.Now().UTC()
	j := &Job{
		ID:   now.Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]),
		Dest: dest, Keep: keep, Command: command, Created: now,
	}
	j.dir = filepath.Join(s.Dir, j.ID)
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	data, _ := json.MarshalIndent(j, "", "  ")
	tmp := j.Manifest() + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp, j.Manifest()); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	f, err := openManifest(j.Manifest())
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: lock %s: %w", j.Manifest(), err)
	}
	j.lock = f
	return j, nil
}

// Release lets go of the job's lock (the job stays pending until Done).
func (j *Job) Release() {
	if j.lock != nil {
		filelock.Unlock(j.lock)
		j.lock.Close()
		j.lock = nil
	}
}

// Done removes the job's directory and manifest: everything was sent.
func (j *Job) Done() error {
	if err := os.RemoveAll(j.dir); err != nil {
		return err
	}
	err := os.Remove(j.Manifest())
	j.Release()
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Pending returns the jobs no live process holds, oldest first, each locked
// for the caller (Release or Done them). A manifest that cannot be parsed is
// reported in skipped, not sent.
func (s *Spool) Pending() (jobs []*Job, skipped []error) {
	names, err := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	if err != nil {
		return nil, []error{err}
	}
	sort.Strings(names)
	for _, m := range names {
		f, err := openManifest(m)
		if err != nil {
			continue // sent meanwhile
		}
		if filelock.TryLock(f) != nil {
			f.Close() // a run still writing it, or another upload sending it
			continue
		}
		if _, err := os.Stat(m); err != nil { // sent while we waited for the lock
			f.Close()
			continue
		}
		var j Job
		if err := json.NewDecoder(f).Decode(&j); err != nil || j.Dest == "" {
			f.Close()
			skipped = append(skipped, fmt.Errorf("spool: unreadable manifest %s: %v", m, err))
			continue
		}
		j.dir, j.lock = strings.TrimSuffix(m, ".json"), f
		jobs = append(jobs, &j)
	}
	return jobs, skipped
}
