package jsonscan

import "unicode/utf8"

// Hex4 decodes the four hex digits at b[i:] (the digits of a \uXXXX escape), reporting false
// if there are fewer than four or one is not a hex digit.
func Hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Unescape decodes the body (without the quotes) of a valid JSON string, as encoding/json
// does: escapes are decoded, a surrogate pair becomes its rune, and a lone surrogate escape
// or a byte that is not UTF-8 becomes U+FFFD. The body must be valid (no bare control
// characters or quotes, every backslash starting a complete escape).
func Unescape(body []byte) string {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(body[i:])
			out = utf8.AppendRune(out, r) // RuneError for a byte that is not UTF-8
			i += size
			continue
		}
		switch body[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := Hex4(body, i+2)
			i += 6
			if 0xD800 <= r && r < 0xDC00 {
				if i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if lo, ok := Hex4(body, i+2); ok && 0xDC00 <= lo && lo < 0xE000 {
						out = utf8.AppendRune(out, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			} else if 0xDC00 <= r && r < 0xE000 {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // " \ /
			out = append(out, body[i+1])
		}
		i += 2
	}
	return string(out)
}

const hexDigits = "0123456789abcdef"

// htmlSafe[b] reports whether ASCII byte b appears unescaped in a string encoding/json writes
// with HTML escaping on (json.Marshal's default).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			t[b] = true
		}
	}
	return t
}()

// AppendString appends s as a JSON string exactly as json.Marshal writes it: short escapes
// for \b \f \n \r \t, \u00XX for other control bytes and for < > &, \ufffd for each byte that
// is not UTF-8, and \u2028 / \u2029 escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendValidUTF8 appends the JSON text b with each byte that is not part of valid UTF-8
// replaced by the escape \ufffd. encoding/json copies a json.RawMessage's bytes as they are,
// but every line dshd writes must be UTF-8. In valid JSON such bytes can only be inside
// strings, where the escape stands for U+FFFD, exactly what encoding/json writes for them in a
// Go string (see AppendString) and decodes them as. Valid input costs one utf8.Valid scan.
func AppendValidUTF8(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	start := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(append(dst, b[start:i]...), `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, b[start:]...)
}
