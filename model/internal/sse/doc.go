// Package sse reads Server-Sent Events streams as model providers send
// them. It is written on bufio.Reader rather than bufio.Scanner so that a
// data line has no 64 KiB limit (only MaxEventSize), and it tolerates CRLF
// line ends, comment (keep-alive) lines and a missing final blank line.
//
//	r := sse.NewReader(resp.Body)
//	for {
//		ev, err := r.Next() // io.EOF at the end of the stream
//		if err != nil {
//			break
//		}
//		handle(ev.Type, ev.Data)
//	}
package sse
