package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/objstore"
)

// forceFlag adds --force, which lets a verb write its output over a bundle.
func forceFlag(f *pflag.FlagSet, p *bool) {
	f.BoolVar(p, "force", false, "write the output even over a bundle (the one read, or any zstd file); without it that is refused, exit 6")
}

// refuseBundle returns an outputError naming path when writing path would
// replace a bundle: one of inputs (the same file, by any name), or any file
// that starts as a bundle does (zstd data). Evidence is never written over
// unless force is set. A path with nothing there, or in object storage, is
// left to the write.
func refuseBundle(path string, force bool, inputs []string) error {
	if force || path == "" || objstore.IsRemote(path) {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil // nothing there, or an error the write itself names
	}
	for _, in := range inputs {
		if objstore.IsRemote(in) {
			continue
		}
		if ii, err := os.Stat(in); err == nil && os.SameFile(fi, ii) {
			return outputError{path, errors.New("it is the bundle this reads; wireproof does not write over a bundle (give another path, or --force)")}
		}
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 4)
	if n, _ := io.ReadFull(f, head); bundle.HasMagic(head[:n]) {
		return outputError{path, errors.New("it holds a bundle (zstd data); wireproof does not write over a bundle (give another path, or --force)")}
	}
	return nil
}

// existsError is an output that already exists where a writer that never
// replaces anything (record, playback, verify) would create a bundle: exit
// 6, as for every output that would replace a bundle. what is "file" or
// "object".
func existsError(path, what string) error {
	return outputError{path, fmt.Errorf("the %s exists; a bundle is never overwritten (give another path)", what)}
}
