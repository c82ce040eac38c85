//go:build unix

package tools

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statAt stats name inside the open directory dir without following a
// final symlink: one path component to resolve instead of the whole path,
// which is most of what a glob over a million files spends.
func statAt(dir *os.File, name string) (time.Time, bool) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Unix()), true
}
