package pathstyle

import (
	"slices"
	"testing"
)

func TestWindowsWithin(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		want   bool
	}{
		{`C:\work`, `C:\work`, true},
		{`C:\work`, `C:\work\src\main.go`, true},
		{`C:\work`, `c:/WORK/src/main.go`, true},
		{`C:\work\`, `C:\work\a`, true},
		{`C:\work`, `C:\workshop\a`, false},
		{`C:\work`, `D:\work\a`, false},
		{`C:\work`, `C:\work\..\other`, false},
		{`C:\work`, `C:\other\..\work\x`, true},
		{`C:\work`, `\\?\C:\work\x`, true},
		{`\\?\c:\work`, `C:\Work\x`, true},
		{`C:\work`, `\\.\C:\work\x`, true},
		{`\\srv\share\proj`, `\\SRV\Share\proj\x`, true},
		{`\\srv\share\proj`, `\\?\UNC\srv\share\proj\x`, true},
		{`\\srv\share\proj`, `\\srv\other\proj\x`, false},
		{`\\srv\share`, `\\srv\share\..\..\other\x`, true}, // ".." stops at the share
		{`C:\`, `C:\anything`, true},
		{`C:\work`, `work\x`, false},    // relative
		{`C:\work`, `C:work\x`, false},  // drive-relative
		{`C:\work`, `\work\x`, false},   // rooted on the current drive
		{`C:\work`, `C:\work.\x`, true}, // Win32 drops trailing dots
		{`C:\work`, `C:\work \x`, true}, // and spaces
	} {
		if got := Windows.Within(tc.dir, tc.p); got != tc.want {
			t.Errorf("Windows.Within(%q, %q) = %v, want %v", tc.dir, tc.p, got, tc.want)
		}
	}
}

func TestUnixWithin(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		want   bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
		{"/a/b", "/A/B/c", false},
		{"/a", `/a/b\..\..\x`, true}, // a backslash is a name character
		{"/a/b", "/a/b/../c", false},
		{"/", "/x", true},
		{"/a", "a/x", false},
	} {
		if got := Unix.Within(tc.dir, tc.p); got != tc.want {
			t.Errorf("Unix.Within(%q, %q) = %v, want %v", tc.dir, tc.p, got, tc.want)
		}
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		s    Style
		a, b string
		want bool
	}{
		{Windows, `C:\Work\A.txt`, `c:/work/a.TXT`, true},
		{Windows, `\\?\UNC\srv\share\x`, `\\srv\share\X`, true},
		{Windows, `C:\work\.git`, `C:\work\.GIT.`, true},
		{Windows, `C:\work\.git`, `C:\work\.git::$INDEX_ALLOCATION`, true},
		{Windows, `C:\a`, `C:\a\b`, false},
		{Unix, "/a/./b/", "/a/b", true},
		{Unix, "/a/B", "/a/b", false},
	} {
		if got := tc.s.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("%v.Equal(%q, %q) = %v, want %v", tc.s, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		s       Style
		in, out string
	}{
		{Windows, `c:/work//src/./x/../main.go`, `C:\work\src\main.go`},
		{Windows, `\\?\C:\work\`, `C:\work`},
		{Windows, `\\?\UNC\srv\share\x`, `\\srv\share\x`},
		{Windows, `C:\..\x`, `C:\x`},
		{Windows, `a\..\..\b`, `..\b`},
		{Windows, `C:`, `C:`},
		{Windows, `C:\`, `C:\`},
		{Unix, "/a//b/../c/", "/a/c"},
		{Unix, "", "."},
	} {
		if got := tc.s.Clean(tc.in); got != tc.out {
			t.Errorf("%v.Clean(%q) = %q, want %q", tc.s, tc.in, got, tc.out)
		}
	}
}

func TestIsAbs(t *testing.T) {
	for _, tc := range []struct {
		s    Style
		p    string
		want bool
	}{
		{Windows, `C:\x`, true},
		{Windows, `c:/x`, true},
		{Windows, `\\srv\share\x`, true},
		{Windows, `\\?\C:\x`, true},
		{Windows, `C:x`, false},
		{Windows, `\x`, false},
		{Windows, `x`, false},
		{Unix, "/x", true},
		{Unix, `C:\x`, false},
	} {
		if got := tc.s.IsAbs(tc.p); got != tc.want {
			t.Errorf("%v.IsAbs(%q) = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
}

func TestNamesAndVolume(t *testing.T) {
	if got := Windows.Names(`\\?\C:\a\.git\hooks`); !slices.Equal(got, []string{"a", ".git", "hooks"}) {
		t.Errorf("Names = %q", got)
	}
	if v := Windows.Volume(`\\?\UNC\srv\share\x`); v != `\\srv\share` {
		t.Errorf("Volume = %q", v)
	}
	if !Windows.SameName(".GIT ", ".git") || Unix.SameName(".GIT", ".git") {
		t.Error("SameName")
	}
}

func FuzzWithinAgreesWithClean(f *testing.F) {
	f.Add(`C:\work`, `c:/work/../x`)
	f.Add(`\\srv\share`, `\\?\UNC\srv\share\y`)
	f.Fuzz(func(t *testing.T, dir, p string) {
		for _, s := range []Style{Unix, Windows} {
			// Cleaning changes no answer, and a path is within itself.
			if s.Within(dir, p) != s.Within(s.Clean(dir), s.Clean(p)) {
				t.Fatalf("%v: Within(%q, %q) changes when cleaned", s, dir, p)
			}
			if !s.Within(p, p) || !s.Equal(p, s.Clean(p)) {
				t.Fatalf("%v: %q is not within or equal to itself", s, p)
			}
		}
	})
}
