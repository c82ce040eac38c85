// Package sse reads Server-Sent Events streams as model providers send
// them. It is written on bufio.Reader rather than bufio.Scanner so that a
// data line has no 64 KiB limit (only MaxEventSize), and it tolerates CRLF
// line ends, comment (keep-alive) lines and a missing final blank line.
package sse
