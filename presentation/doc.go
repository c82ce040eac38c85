// Package presentation is the provider-neutral vocabulary a tool uses to say
// how its call and its result should be shown: call views, the card-tagged
// result union (generic, terminal, diff), file locations and diffs, and the
// hunk computation that turns a before- and after-image into applied hunks.
// It knows nothing of ACP; the bridge maps cards to ACP content.
package presentation
