package pathstyle

import (
	"runtime"
	"strings"
)

// Style is a platform's way of naming files.
type Style int

const (
	// Unix paths: "/" separates and names compare byte for byte.
	Unix Style = iota
	// Windows paths: drive letters, UNC shares, both separators,
	// case-insensitive names.
	Windows
)

// Native is the style of the platform dshd runs on.
var Native = native()

func native() Style {
	if runtime.GOOS == "windows" {
		return Windows
	}
	return Unix
}

// Separator is the style's preferred separator.
func (s Style) Separator() byte {
	if s == Windows {
		return '\\'
	}
	return '/'
}

// parsed is a path split into its volume and its names, with "." and ".."
// applied lexically.
type parsed struct {
	// volume is "" (relative), "/" (Unix root), "C:" (drive, relative or
	// not: see rooted), `\\server\share` or "" for a rooted path without
	// a drive (`\x`, relative to the current drive).
	volume string
	rooted bool // the names start at the volume's root
	names  []string
}

func (s Style) parse(p string) parsed {
	var r parsed
	if s == Unix {
		r.rooted = strings.HasPrefix(p, "/")
		if r.rooted {
			r.volume = "/"
		}
		r.names = lexical(strings.Split(p, "/"), r.rooted)
		return r
	}
	p = strings.ReplaceAll(p, "/", `\`)
	p = stripNamespace(p)
	switch {
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		r.volume = strings.ToUpper(p[:1]) + ":"
		p = p[2:]
		r.rooted = strings.HasPrefix(p, `\`)
	case strings.HasPrefix(p, `\\`):
		// \\server\share\rest: the share is the volume.
		parts := strings.SplitN(p[2:], `\`, 3)
		if len(parts) >= 2 && parts[0] != "" && parts[1] != "" {
			r.volume = `\\` + parts[0] + `\` + parts[1]
			r.rooted = true
			p = ""
			if len(parts) == 3 {
				p = parts[2]
			}
		} else {
			r.rooted = true
		}
	default:
		r.rooted = strings.HasPrefix(p, `\`)
	}
	r.names = lexical(strings.Split(p, `\`), r.rooted)
	return r
}

// stripNamespace turns the extended-length and device forms into the
// plain one: \\?\C:\x and \\.\C:\x → C:\x, \\?\UNC\s\sh → \\s\sh.
func stripNamespace(p string) string {
	for _, prefix := range []string{`\\?\`, `\\.\`, `\??\`} {
		if len(p) < len(prefix) || p[:len(prefix)] != prefix {
			continue
		}
		rest := p[len(prefix):]
		if len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`) {
			return `\\` + rest[4:]
		}
		return rest
	}
	return p
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// lexical drops empty and "." names and applies "..": above the root it
// stays at the root; in a relative path a leading ".." is kept.
func lexical(names []string, rooted bool) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		switch n {
		case "", ".":
		case "..":
			switch {
			case len(out) > 0 && out[len(out)-1] != "..":
				out = out[:len(out)-1]
			case !rooted:
				out = append(out, n)
			}
		default:
			out = append(out, n)
		}
	}
	return out
}

// IsAbs reports whether p names the same file whatever the current
// directory (and, on Windows, the current drive).
func (s Style) IsAbs(p string) bool {
	r := s.parse(p)
	if s == Windows {
		return r.rooted && r.volume != ""
	}
	return r.rooted
}

// Clean returns p's plain, lexically clean form: the preferred separator,
// no "." or "..", no trailing separator; on Windows the extended and device
// prefixes are dropped and the drive letter is upper case. Names keep
// their case.
func (s Style) Clean(p string) string {
	r := s.parse(p)
	sep := string(s.Separator())
	var b strings.Builder
	switch {
	case s == Unix && r.rooted:
		b.WriteString("/")
	case s == Windows:
		b.WriteString(r.volume)
		if r.rooted {
			b.WriteString(sep)
		}
	}
	b.WriteString(strings.Join(r.names, sep))
	out := b.String()
	if out == "" {
		return "."
	}
	return out
}

// nameKey is what two names are compared by.
func (s Style) nameKey(n string) string {
	if s == Unix {
		return n
	}
	if n == "." || n == ".." {
		return n
	}
	// The Win32 layer opens "a.txt:stream" as a stream of a.txt and
	// "dir::$INDEX_ALLOCATION" as dir itself, and drops trailing dots and
	// spaces: the name the file system sees is what counts.
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimRight(n, ". ")
	return strings.ToUpper(strings.ToLower(n))
}

// SameName reports whether a and b are the same name (one path component)
// in this style: ".GIT." is ".git" on Windows.
func (s Style) SameName(a, b string) bool { return s.nameKey(a) == s.nameKey(b) }

// Equal reports whether a and b name the same path, lexically.
func (s Style) Equal(a, b string) bool {
	pa, pb := s.parse(a), s.parse(b)
	return s.sameVolume(pa, pb) && len(pa.names) == len(pb.names) && s.prefix(pa.names, pb.names)
}

// Within reports whether p is dir or lies below it, lexically: on Unix
// "/a/bc" is not within "/a/b"; on Windows `c:/WORK/x` is within `C:\work`.
// A relative p is never within an absolute dir, nor the other way round.
func (s Style) Within(dir, p string) bool {
	pd, pp := s.parse(dir), s.parse(p)
	return s.sameVolume(pd, pp) && len(pd.names) <= len(pp.names) && s.prefix(pd.names, pp.names)
}

func (s Style) sameVolume(a, b parsed) bool {
	if a.rooted != b.rooted {
		return false
	}
	if s == Windows {
		return strings.EqualFold(a.volume, b.volume)
	}
	return a.volume == b.volume
}

// prefix reports whether every name of short matches long's name there.
func (s Style) prefix(short, long []string) bool {
	for i, n := range short {
		if s.nameKey(n) != s.nameKey(long[i]) {
			return false
		}
	}
	return true
}

// Names returns the names of p's clean form, without its volume.
func (s Style) Names(p string) []string { return s.parse(p).names }

// Volume returns the volume of p: "/" for an absolute Unix path, "C:" or
// `\\server\share` on Windows, "" for a path without one.
func (s Style) Volume(p string) string { return s.parse(p).volume }
