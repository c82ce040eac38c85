package openai

import (
	"crypto/rand"
	"encoding/hex"
)

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
