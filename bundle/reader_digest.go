package bundle

import (
	"crypto/sha256"
	"hash"
)

// digestBatch is how many bytes of lines are hashed at a time off the
// reading goroutine.
const digestBatch = 1 << 20

// digester keeps the running SHA-256 of the lines read, which the trailer
// check compares. Hashing is a third of a replay's work once decoding is
// lean, so lines are batched and each full batch is hashed by a goroutine
// while the reader fills the next: on two cores the digest costs the reader
// a copy, not a hash. At most one batch is in flight; no goroutine outlives
// Sum or wait.
type digester struct {
	h     hash.Hash
	batch []byte
	spare []byte        // the buffer of the batch in flight, reused once it is hashed
	done  chan struct{} // closed when the batch in flight is hashed; nil when none is
}

func newDigester() *digester { return &digester{h: sha256.New()} }

// write adds line and its newline.
func (d *digester) write(line []byte) {
	if len(line) >= digestBatch {
		// A huge line is hashed in place rather than kept in a batch buffer.
		d.wait()
		d.h.Write(d.batch)
		d.h.Write(line)
		d.h.Write(newline)
		d.batch = d.batch[:0]
		return
	}
	if len(d.batch)+len(line)+1 > digestBatch {
		d.wait()
		b := d.batch
		d.batch, d.spare = d.spare[:0], b
		done := make(chan struct{})
		d.done = done
		go func() {
			d.h.Write(b)
			close(done)
		}()
	}
	if d.batch == nil {
		d.batch = make([]byte, 0, digestBatch) // full size at once: no regrowing
	}
	d.batch = append(d.batch, line...)
	d.batch = append(d.batch, '\n')
}

// wait blocks until the batch in flight, if any, is hashed.
func (d *digester) wait() {
	if d.done != nil {
		<-d.done
		d.done = nil
	}
}

// sum returns the SHA-256 of everything written.
func (d *digester) sum() []byte {
	d.wait()
	d.h.Write(d.batch)
	d.batch = d.batch[:0]
	return d.h.Sum(nil)
}
