// Package providers builds an [llm.Provider] from the daemon's settings
// (--provider, --model, --base-url, --api-key-env, --script), with the
// environment fallbacks documented on [Options]. It is the one place that
// knows every adapter, so cmd/dshd and tests need not.
package providers
