//go:build !unix

package tools

import (
	"os"
	"time"
)

// statAt has no directory-relative stat here; modTime falls back to the
// entry's Info.
func statAt(*os.File, string) (time.Time, bool) { return time.Time{}, false }
