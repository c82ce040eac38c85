// Package jsonscan holds the byte-level JSON helpers that dshd's own encoders and scanners
// share, so each exists once and is held to encoding/json by one differential fuzz test:
//
//	dst = jsonscan.AppendString(dst, "a<b")       // "a\u003cb", as json.Marshal writes it
//	dst = jsonscan.AppendValidUTF8(dst, rawJSON)  // raw JSON, each byte that is not UTF-8 as \ufffd
//	r, ok := jsonscan.Hex4([]byte(`\u00e9`), 2)   // 'é', true
//	s := jsonscan.Unescape([]byte(`a\nb`))        // the body of a valid JSON string, decoded
//
// It is not a JSON parser: callers validate first (encoding/json, or their own scanner) and
// use these helpers on input they know is well formed where the doc says so.
package jsonscan
