package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/wireproof/wireproof/internal/objstore"
)

// racyWindow is how close to its modification a file may be stated for the
// stat to vouch for its content: a rewrite within the file system's
// timestamp granularity (a kernel tick, a second on some file systems) may
// leave size and modification time as they were.
const racyWindow = time.Second

// stamp is what says a bundle file is still the one that was read, without
// reading it: the same file (device and inode), size and modification time.
type stamp struct {
	fi os.FileInfo
	// recheck, when set, is when a file stated less than racyWindow after it
	// was modified is to be read again, once, in case it was rewritten
	// unseen by its stat (racy, as git calls it).
	recheck time.Time
}

// statBundle stamps the file at path; a removed file is an error wrapping
// fs.ErrNotExist.
func statBundle(path string) (stamp, error) {
	now := time.Now()
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	st := stamp{fi: fi}
	if m := fi.ModTime(); m.After(now.Add(-racyWindow)) {
		st.recheck = m.Add(racyWindow)
	}
	return st, nil
}

// holds reports whether what was read at stamp a is what the file, stamped b
// now, still holds.
func (a stamp) holds(b stamp, now time.Time) bool {
	return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) && a.fi.Size() == b.fi.Size() &&
		a.fi.ModTime().Equal(b.fi.ModTime()) && (a.recheck.IsZero() || now.Before(a.recheck))
}

// srcKey identifies a listed bundle across listings, so it keeps its id: its
// path, its name and which of the listing's entries with both it is (the same
// argument given twice lists its bundles twice).
type srcKey struct {
	path, name string
	n          int
}

// listing returns the bundles as listed now, with their ids: the arguments
// listed again (Options.Args), or the sources New was given. A bundle listed
// for the first time is given an id no bundle had before; one listed before
// keeps its own.
func (s *Server) listing() ([]Source, []string, error) {
	srcs := s.srcs0
	if s.args != nil {
		srcs = nil
		for _, arg := range s.args {
			got, err := Resolve([]string{arg}, nil)
			var none *objstore.NoBundlesError
			if errors.Is(err, fs.ErrNotExist) || errors.As(err, &none) {
				continue // gone, or emptied, since: it lists nothing now
			}
			if err != nil {
				return nil, nil, err
			}
			srcs = append(srcs, got...)
		}
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	ids := make([]string, len(srcs))
	seen := map[srcKey]int{}
	for i, src := range srcs {
		k := srcKey{src.Path, src.Name, 0}
		k.n = seen[k]
		seen[k]++
		id, ok := s.byKey[k]
		if !ok {
			id = s.newID(src.Name)
			s.byKey[k] = id
		}
		s.byID[id] = src
		ids[i] = id
	}
	s.ids = ids
	return srcs, ids, nil
}

// newID is an id for a bundle named name that no bundle had before: the name
// made safe for a URL, with a number after it if needed. s.listMu is held.
func (s *Server) newID(name string) string {
	id := idUnsafe.ReplaceAllString(name, "~")
	if id == "" {
		id = "bundle"
	}
	base := id
	for n := 2; ; n++ {
		if _, dup := s.byID[id]; !dup {
			return id
		}
		id = fmt.Sprintf("%s-%d", base, n)
	}
}

// source returns the bundle id names: one listed now or before (a removed
// bundle keeps its id, so its pages answer 404 naming its file). An id not
// known yet may be a bundle added since the last listing: the arguments are
// listed again to see.
func (s *Server) source(id string) (Source, bool) {
	s.listMu.Lock()
	src, ok := s.byID[id]
	s.listMu.Unlock()
	if ok || s.args == nil {
		return src, ok
	}
	if _, _, err := s.listing(); err != nil {
		return Source{}, false
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	src, ok = s.byID[id]
	return src, ok
}
