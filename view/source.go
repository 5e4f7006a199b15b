package view

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Source is one bundle the viewer serves, with what a suite's results.json
// says about it when it came from one.
type Source struct {
	// Path is where the bundle is read from.
	Path string
	// Name is the bundle's path relative to the argument it was found under
	// (the file name for a bundle given directly), without ".zst".
	Name string
	// Iteration, Status and Check come from results.json (0 and "" without one).
	Iteration int
	Status    string
	Check     string
}

// InputError is an argument that names no bundle: a missing path, a file
// that is not a bundle, a directory without any.
type InputError struct {
	Arg string
	Err error
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %v", e.Arg, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

// suiteEntry is the part of a line of verify's results.json the viewer reads.
type suiteEntry struct {
	Iteration int    `json:"iteration"`
	Scenario  string `json:"scenario"`
	Status    string `json:"status"`
	Bundle    string `json:"bundle"`
	Check     string `json:"check"`
}

// Resolve turns the command line's arguments into bundles: a bundle file is
// itself; a results.json (or a directory holding one) is the suite's bundles
// in its order; any other directory is every *.zst under it, in sorted
// order. This is the one place that knows where bundles come from.
func Resolve(args []string) ([]Source, error) {
	if len(args) == 0 {
		return nil, errors.New("no bundle or directory given")
	}
	var out []Source
	for _, arg := range args {
		srcs, err := resolveArg(arg)
		if err != nil {
			return nil, &InputError{Arg: arg, Err: err}
		}
		out = append(out, srcs...)
	}
	return out, nil
}

func resolveArg(arg string) ([]Source, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, errors.Unwrap(err) // the PathError would name arg twice
	}
	if !st.IsDir() {
		if filepath.Base(arg) == "results.json" {
			return readResults(arg)
		}
		return []Source{{Path: arg, Name: strings.TrimSuffix(filepath.Base(arg), ".zst")}}, nil
	}
	if results := filepath.Join(arg, "results.json"); fileExists(results) {
		return readResults(results)
	}
	var out []Source
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasSuffix(d.Name(), ".work") {
			return filepath.SkipDir // a kept workspace, not evidence
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".zst") {
			return nil
		}
		rel, err := filepath.Rel(arg, p)
		if err != nil {
			rel = d.Name()
		}
		out = append(out, Source{Path: p, Name: strings.TrimSuffix(filepath.ToSlash(rel), ".zst")})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no bundles (*.zst) in this directory")
	}
	return out, nil
}

// readResults reads a suite's results.json. Bundle paths are taken as written
// and, when that file is gone (the suite's directory was moved), looked up
// beside results.json.
func readResults(path string) ([]Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	var entries []suiteEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("not a suite's results.json: %w", err)
	}
	dir := filepath.Dir(path)
	var out []Source
	for _, e := range entries {
		if e.Bundle == "" {
			continue // the run wrote no bundle
		}
		p := e.Bundle
		if !filepath.IsAbs(p) && !fileExists(p) {
			p = filepath.Join(dir, p)
		}
		if !fileExists(p) {
			p = filepath.Join(dir, filepath.Base(e.Bundle))
		}
		out = append(out, Source{Path: p, Name: strings.TrimSuffix(filepath.Base(e.Bundle), ".zst"),
			Iteration: e.Iteration, Status: e.Status, Check: e.Check})
	}
	if len(out) == 0 {
		return nil, errors.New("results.json lists no bundles")
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
