// Package presentation is the provider-neutral vocabulary a tool uses to say
// how its call and its result should be shown: call views, the card-tagged
// result union (generic, terminal, diff) and its JSON codec, file locations
// and diffs, and the hunk computation that turns a before- and after-image
// into applied hunks. It also holds the provider-neutral pieces a UI bridge
// needs to render cards: the console-fence fallback of a terminal card and
// the relativisation of paths and titles against a session's cwd.
// It knows nothing of ACP; the bridge maps cards to ACP content.
//
// For example, an edit's card is the hunks between the file's two images
// (ExampleHunks):
//
//	res := presentation.Hunks("/w/main.go", &before, &after, presentation.WithContext(1))
//	for _, d := range res.Diffs { // one ACP diff per hunk, with its line
//		fmt.Println(d.Line, *d.OldText, d.NewText)
//	}
package presentation
