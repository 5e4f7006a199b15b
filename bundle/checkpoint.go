package bundle

import (
	"encoding/binary"
)

// A checkpoint is a zstd skippable frame (RFC 8878 section 3.1.2) the
// Writer puts after every frame it ends (every FrameInterval, 4 MiB and at
// Close; a flush in between ends a block, not the frame): it binds everything
// stored before it into a chain, so a reader can tell a file cut short (a
// prefix of what the writer wrote, every checkpoint in it verified) from one
// that was changed. The last one, after the trailer's frame, is the seal:
// a file that ends with a seal was closed, and a reader that meets its end
// anywhere else knows the file was damaged, not cut. zstd tools skip
// checkpoints. Layout (little-endian):
//
//	magic      4 bytes  0x184D2A5B (skippable frame, id 11)
//	size       4 bytes  49
//	offset     8 bytes  where the checkpoint starts in the file
//	content    8 bytes  decompressed bytes stored before it
//	flags      1 byte   bit 0: final (the seal); the other bits are 0
//	digest    32 bytes  SHA-256 of the file's bytes before the checkpoint

// skippableMagic starts a checkpoint: zstd's skippable frame magic with id 11.
var skippableMagic = []byte{0x5b, 0x2a, 0x4d, 0x18}

const (
	// checkpointSize is the size of a checkpoint's content; checkpointFrame
	// of the whole skippable frame.
	checkpointSize  = 8 + 8 + 1 + 32
	checkpointFrame = 8 + checkpointSize
)

type checkpointInfo struct {
	offset  uint64
	content uint64
	final   bool
	flags   byte
	digest  [32]byte
}

// appendCheckpoint appends the checkpoint frame of c to b.
func appendCheckpoint(b []byte, c checkpointInfo) []byte {
	b = append(b, skippableMagic...)
	b = binary.LittleEndian.AppendUint32(b, checkpointSize)
	b = binary.LittleEndian.AppendUint64(b, c.offset)
	b = binary.LittleEndian.AppendUint64(b, c.content)
	var flags byte
	if c.final {
		flags = 1
	}
	b = append(b, flags)
	return append(b, c.digest[:]...)
}

// parseCheckpoint reads a checkpoint's content (checkpointSize bytes).
func parseCheckpoint(b []byte) checkpointInfo {
	c := checkpointInfo{
		offset:  binary.LittleEndian.Uint64(b),
		content: binary.LittleEndian.Uint64(b[8:]),
		final:   b[16]&1 != 0,
		flags:   b[16],
	}
	copy(c.digest[:], b[17:])
	return c
}
