// Package looptest is the scaffolding shared by the tests of model and
// model/task: a provider wrapper that records requests, a bridge agent
// served to an acptest client over an in-memory pipe, and readers for the
// tool results a request carries back to the model.
//
//	conn, _ := looptest.Connect(t, agent, client)
//	sid := looptest.NewSession(t, conn, t.TempDir())
//	looptest.WaitUpdate(t, client, "the tool card", isCard) // woken by each update, no polling
package looptest
