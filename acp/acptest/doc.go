// Package acptest is an in-process ACP client for tests, plus a validator for the official
// ACP schema.
//
// [Client] is a scriptable client: it answers session/request_permission by a
// [PermissionPolicy], serves fs/* from a real directory ([DirFS]) or a fake ([MemFS]), serves
// terminal/* by running real processes ([ExecTerminals]) or from a script ([FakeTerminals]),
// collects session/update notifications, and records every message in wire order in a
// [Recorder] using the fixture envelope {"dir":"client->agent"|"agent->client","msg":…}.
// [Connect] wires a Client to an in-process agent over an in-memory pipe.
//
// [Validator] checks messages against the per-method $defs of the official schema (DIGEST.md
// §8.2), never the root schema. The schema is read from $ACP_SCHEMA or found by walking up
// from the working directory to ../shared/acp/schema.json; it is never copied into the
// project. [SchemaOrSkip] skips a test, saying why, when the file is absent.
//
//	c := &acptest.Client{Permission: acptest.RejectOnce, FS: acptest.NewMemFS(nil)}
//	conn := acptest.Connect(t, c, newAgent)
//	... conn.Initialize / NewSession / Prompt ...
//	acptest.CheckSchema(t, c.Recorder) // every message against its per-method $def
package acptest
