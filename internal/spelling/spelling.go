// Package spelling writes a secret the ways it may cross the wire (JSON
// escapes, percent-encoding, base64), for the redactor and for the tests that
// prove no spelling of a secret reaches a recording.
package spelling

import (
	"encoding/base64"
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode/utf8"
)

// Names lists the spellings Spell knows, the raw text first.
var Names = []string{"raw", "json-go", "json-u-lower", "json-u-upper", "json-slash", "pct-upper", "pct-lower", "form", "mixed", "html"}

// Spell returns s in the named spelling:
//
//	raw           as it is
//	json-go       as Go's encoding/json writes it in a string: <, >, & as \u003c \u003e \u0026
//	json-u-lower  every character as a JSON \u escape, lower-case hex (surrogate pairs above U+FFFF)
//	json-u-upper  the same, upper-case hex
//	json-slash    / as \/
//	pct-upper     every byte percent-encoded, upper-case hex
//	pct-lower     the same, lower-case hex
//	form          a form value: space as +, unreserved characters as they are
//	mixed         characters alternately raw, \u escaped and percent-encoded
//	html          HTML-escaped, as a report shows text
func Spell(s, name string) string {
	var b strings.Builder
	for i, r := range s {
		switch name {
		case "raw":
			b.WriteRune(r)
		case "html":
			return html.EscapeString(s)
		case "json-u-lower":
			writeU(&b, r, "\\u%04x")
		case "json-u-upper":
			writeU(&b, r, "\\u%04X")
		case "json-go":
			switch r {
			case '<', '>', '&':
				fmt.Fprintf(&b, "\\u%04x", r)
			case '"', '\\':
				b.WriteString("\\" + string(r))
			default:
				b.WriteRune(r)
			}
		case "json-slash":
			if r == '/' {
				b.WriteString(`\/`)
			} else {
				b.WriteRune(r)
			}
		case "pct-upper":
			writePct(&b, r, "%%%02X")
		case "pct-lower":
			writePct(&b, r, "%%%02x")
		case "form":
			switch {
			case r == ' ':
				b.WriteByte('+')
			case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.~", r)):
				b.WriteRune(r)
			default:
				writePct(&b, r, "%%%02X")
			}
		case "mixed":
			switch i % 3 {
			case 0:
				b.WriteRune(r)
			case 1:
				writeU(&b, r, "\\u%04X")
			default:
				writePct(&b, r, "%%%02x")
			}
		default:
			panic("spelling: unknown spelling " + name)
		}
	}
	return b.String()
}

func writeU(b *strings.Builder, r rune, f string) {
	if r >= 0x10000 {
		r -= 0x10000
		fmt.Fprintf(b, f+f, 0xd800+(r>>10)&0x3ff, 0xdc00+r&0x3ff)
		return
	}
	fmt.Fprintf(b, f, r)
}

func writePct(b *strings.Builder, r rune, f string) {
	for _, c := range []byte(string(r)) {
		fmt.Fprintf(b, f, c)
	}
}

// Base64Stable returns the parts of s's base64 encodings (standard and URL
// alphabets) that do not depend on the bytes around s, at each of the three
// alignments s can have in a longer encoded text: any base64 of text that
// contains s contains one of them. Where s ends the encoded text, its last
// character (and the padding after it) depends on s alone too: that
// longer form, with and without the padding, is returned as well, so the
// base64 of a secret on its own is redacted whole, not up to its last
// character or two. Secrets shorter than 8 bytes get none, as their stable
// parts would be short enough to occur by chance.
func Base64Stable(s string) []string {
	if len(s) < 8 {
		return nil
	}
	var out []string
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for o := range 3 {
		src := make([]byte, o+len(s)+2)
		copy(src[o:], s)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			e := enc.EncodeToString(src)
			// Character k holds bits [6k, 6k+6) of src; keep those within s.
			first := (8*o + 5) / 6
			last := (8*(o+len(s)))/6 - 1
			add(e[first : last+1])
			end := enc.EncodeToString(src[:o+len(s)])[first:]
			add(strings.TrimRight(end, "="))
			add(end)
		}
	}
	return out
}
