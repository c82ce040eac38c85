// Package host defines what a running tool may ask of the session that runs
// it (roots, where its path arguments land, file access, editor terminals,
// live progress, the plan). The bridge implements [Host]; tools get it
// from the call they serve (registry.Call's Host method, as go-sdk's
// ServerRequest carries its Session). It exists so that tools and the bridge meet without
// depending on each other.
//
// A tool never opens a path it re-derived from its arguments: it asks
// [Host.Land] for the [Landing] the session's policy judged and hands that
// to [Files], or opens it with the Landing's own methods, which go through
// [os.Root] beneath the session root holding it:
//
//	l, err := h.Land(args.Path)
//	if err != nil {
//		return toolError(err.Error())
//	}
//	text, err := h.Files().ReadTextFile(ctx, l, 0, 0)
package host
