// Package sessionlog owns the durable session log: one append-only JSONL
// file per session (<dir>/<session id>.jsonl), from which the bridge
// replays session/load, restores remembered rules and the model's history
// on load and resume, and answers session/list and session/delete.
//
// Every line is one record in an envelope the package writes itself:
//
//	{"t":"update","ts":1764536400123,"d":{...}}
//
// t is the record kind (see the Kind constants; any printable ASCII name
// without quotes or backslashes may be used), ts the append time in Unix
// milliseconds, and d the payload: any JSON value, stored compactly and
// returned byte for byte as json.RawMessage. The package never interprets
// payloads other than the header and title; the bridge decides what they
// hold. The first record of every file is the header.
//
// Every [Log.Append] writes its record to the file with one write before
// it returns, so the record is in the kernel's page cache and survives the
// process dying at any later point (kill -9 included). [Log.Sync] fsyncs
// the file so the records also survive a machine crash; the bridge calls
// it at the end of every turn (and Close does). [Create] writes the header
// at once and fsyncs it in the background, which the first Sync waits for.
// A process crash (even SIGKILL in the middle of a write) loses at most
// the record being written, a machine crash at most the records appended
// since the last Sync; either may leave a torn last line: [Open] truncates
// that tail (logging a warning) so new appends start on a fresh line, and
// decoding skips any undecodable line with a warning rather than failing
// the session.
//
// One Log (one process) writes a session at a time: [Create] and [Open]
// take an exclusive flock on the file, held until [Log.Close] or the
// process's death, and Open of a session held elsewhere fails with
// [ErrLocked]. [List] reads without a lock. [List] reads only the headers of the sessions it skips and
// finds titles incrementally (it remembers how far it scanned each file),
// so listing again after a turn costs the bytes appended since.
package sessionlog
