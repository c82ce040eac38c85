// Package pathstyle compares file system paths the way the platform's
// file system names them, so that root confinement and protected paths
// hold on Windows paths too:
//
//	pathstyle.Windows.Within(`C:\Work`, `c:/work/src/main.go`)    // true
//	pathstyle.Windows.Equal(`\\?\UNC\srv\share\x`, `\\srv\share\X`) // true
//	pathstyle.Native.Within(root, abs)                              // what the OS does
//
// The functions are pure (no file system access) and both styles are
// available on every platform, so the Windows rules are unit-tested on
// Linux. Resolving symlinks is not done here: callers pass paths already
// resolved (policy.Resolve), and use this package to compare them.
//
// Unix: "/" separates, names compare byte for byte.
//
// Windows: "\" and "/" both separate; the volume is a drive ("C:") or a
// UNC share (\\server\share), and the extended and device forms
// (\\?\C:\x, \\.\C:\x, \\?\UNC\server\share\x, \??\C:\x) name the same
// path as the plain form; names compare case-insensitively (Unicode simple
// folding, which agrees with NTFS's upper-case table for the names people
// use); a name's trailing dots and spaces and an alternate-data-stream
// suffix (".git::$INDEX_ALLOCATION", "a.txt:s:$DATA") are ignored, as
// the Win32 layer ignores them when it opens the path. What this package
// cannot see: 8.3 short names (PROGRA~1) and per-directory case
// sensitivity, which need the file system.
package pathstyle
