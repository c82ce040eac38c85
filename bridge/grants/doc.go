// Package grants keeps the permission answers that outlive a session: the
// rules an "Always allow" or "Always reject" remembered for a project or
// for the user, in small JSON files the next session and the next daemon
// read.
//
//	<project>/.dshd/settings.local.json     project scope (git-ignored)
//	<user config>/dshd/settings.local.json  user scope
//
// A file has the shape of a settings file's permissions section:
//
//	{"permissions": {"allow": ["@edits(/home/me/proj/src/**)", "bash(go test *)"],
//	                 "deny": ["bash(git push *)"]}}
//
// The project file sits next to the project's settings.json, and the
// directory gets a .gitignore naming it (created, or extended by one line),
// so remembered answers never end up in a commit.
//
// Every change is a read-modify-write under an exclusive lock of a
// sidecar lock file (two daemons in one project do not lose each other's
// rules) and is written to a temporary file that is synced and renamed
// over the original: a reader sees the old file or the new one, never half
// of one. A damaged file (bad JSON, an unknown key, a rule that does not
// parse) is reported and ignored, never lost: reading it yields an error
// and no rules, and the next change moves it aside to
// settings.local.json.damaged-<UTC time> before writing a fresh file.
//
// Reads are cached per file. A change made through the Store applies at
// once; the file is looked at again (a stat) when its cached content is
// [Recheck] old, and read again when its size, modification time or
// identity changed, so a rule remembered or revoked by another daemon
// applies to the tool calls that start from 100 ms after it was written.
//
// Example:
//
//	st := grants.New(filepath.Join(configDir, "dshd", "settings.local.json"))
//	err := st.Add(cwd, policy.ScopeProject, policy.Allow, rule)
//	rs, problems := st.RuleSet(cwd) // every project and user grant for cwd
package grants
