// Package openfile reads the daemon's local files in as few system calls
// as it can: what the 1,000-call turn pays for each file it
// reads. On this project's Linux machines a system call costs some
// microseconds, and os.ReadFile of a five-byte file makes ten of them.
//
//	fi, b, err := openfile.ReadRegular("/ws/main.go", 1<<20)
//	switch {
//	case err != nil: // missing or unreadable
//	case !fi.Mode().IsRegular(): // not opened: a FIFO would block
//	case b == nil: // larger than the limit: not read
//	}
package openfile
