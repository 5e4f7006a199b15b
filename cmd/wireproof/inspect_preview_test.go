package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
)

// TestAppendPreview: a preview of room runes is the whole payload escaped
// and then cut to room runes (room-3 and "..."), however long the payload,
// though only its start is escaped; binary and invalid UTF-8 show their
// size and leading bytes.
func TestAppendPreview(t *testing.T) {
	long := strings.Repeat(`{"id":"thr_1","title":"a background task"},`, 1<<15) // 1.4 MB
	texts := []string{
		"", "short", long, "line one\nline two\ttabbed\r\x01\x7f" + long,
		strings.Repeat("é✓", 40), strings.Repeat("\x02", 30), strings.Repeat("a", 19) + "\n",
	}
	for _, text := range texts {
		for _, room := range []int{-1, 0, 20, 21, 37, 120} {
			got := string(appendPreview(nil, bundle.Text([]byte(text)), room))
			if diff := cmp.Diff(cutRunes(string(escapeControls([]byte(text), -1)), room), got); diff != "" {
				t.Errorf("preview of %d bytes in %d runes (-want +got):\n%s", len(text), room, diff)
			}
		}
	}
	for _, tc := range []struct {
		p    bundle.Payload
		want string
	}{
		{bundle.Payload{Data: []byte{0xff, 0xfe, 'a'}}, "<3 bytes not UTF-8> fffe61"},
		{bundle.Payload{Data: []byte("hi"), Binary: true}, "<2 bytes binary> 6869"},
		{bundle.Payload{Data: []byte(strings.Repeat("\x00", 40)), Binary: true}, "<40 bytes binary> " + strings.Repeat("00", 32) + "..."},
	} {
		if got := string(appendPreview(nil, tc.p, 200)); got != tc.want {
			t.Errorf("preview = %q, want %q", got, tc.want)
		}
	}
}

// cutRunes is what a preview of room runes shows of the escaped text s.
func cutRunes(s string, room int) string {
	if room < 0 {
		return s
	}
	room = max(room, 20)
	if utf8.RuneCountInString(s) <= room {
		return s
	}
	r := []rune(s)
	return string(r[:room-3]) + "..."
}
