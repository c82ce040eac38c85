// Package config owns dshd's settings files: their format, how the user,
// project and command-line files merge, how a bad file is reported (with
// line and column), and the live reload that swaps a valid change in
// without a restart while keeping the last good settings on a bad one.
//
// A settings file is JSON:
//
//	{
//	  "model": {"provider": "openai", "name": "gpt-4.1", "baseUrl": "https://…/v1",
//	            "apiKeyEnv": "OPENAI_API_KEY", "maxTokens": 8192},
//	  "tools": {"allow": ["read", "grep"], "deny": ["bash"]},
//	  "permissions": {"defaultMode": "default",
//	                  "allow": ["bash(go test *)"], "ask": [], "deny": ["read(/etc/**)"]},
//	  "bash": {"defaultTimeoutMs": 120000, "maxTimeoutMs": 600000, "outputLimitBytes": 30000,
//	           "maxBackgroundJobs": 32},
//	  "sandbox": {"mode": "workspace-write", "network": true, "writableRoots": ["/opt/cache"],
//	              "required": false, "mcpServers": false},
//	  "maxTurnRequests": 50
//	}
//
// Later files override earlier ones field by field; rule lists and tool
// restrictions accumulate (a deny anywhere stays a deny).
package config
