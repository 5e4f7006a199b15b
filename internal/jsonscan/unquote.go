package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnquote appends the value of the string whose contents (between the
// quotes) are s to dst, exactly as encoding/json unmarshals it into a Go
// string: escapes decoded, a surrogate pair joined, a lone surrogate and each
// byte of invalid UTF-8 replaced by U+FFFD. ok is false when s is not the
// contents of a valid JSON string.
func AppendUnquote(dst, s []byte) (out []byte, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return dst, false
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s, i)
				if r < 0 {
					return dst, false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2 := hex4(s, i+2); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								dst = utf8.AppendRune(dst, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError // a lone surrogate, as encoding/json treats it
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, false
			}
		case c == '"' || c < 0x20:
			return dst, false
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied at once.
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] >= 0x20 && s[j] != '\\' && s[j] != '"' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst, true
}

// hex4 decodes the four hex digits at s[i:], or returns -1.
func hex4(s []byte, i int) rune {
	if len(s)-i < 4 {
		return -1
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}
