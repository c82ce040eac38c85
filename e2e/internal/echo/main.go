package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &msg) == nil && len(msg.ID) > 0 {
				out.WriteString(`{"jsonrpc":"2.0","id":`)
				out.Write(msg.ID)
				out.WriteString(`,"result":{}}` + "\n")
				if out.Flush() != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
