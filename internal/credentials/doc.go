// Package credentials keeps the model provider a user set up with
// `dshd auth`: which service, its endpoint, the model and the API key, in
// one file readable only by the user (mode 0600, written atomically), in
// dshd's user configuration directory, never in a project:
//
//	c := &credentials.Credentials{Service: "anthropic", Model: "claude-sonnet-4-5", APIKey: key}
//	err := credentials.Save(path, c)
//	c, err = credentials.Load(path) // nil, nil when there is none
//	removed, err := credentials.Remove(path)
//
// [Check] tests a key with one cheap request (a model list, or
// OpenRouter's key endpoint) before it is saved. The key travels as an
// llm.Secret, which prints, logs and marshals as "[redacted]"; only the
// file and the provider's request carry it.
package credentials
