package presentation_test

import (
	"encoding/json"
	"fmt"

	"github.com/dsh-tools/dshd/presentation"
)

func ExampleHunks() {
	before := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	after := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	res := presentation.Hunks("/w/main.go", &before, &after, presentation.WithContext(1))
	for _, d := range res.Diffs {
		fmt.Printf("line %d\n-%q\n+%q\n", d.Line, *d.OldText, d.NewText)
	}
	// Output:
	// line 3
	// -"func main() {\n\tprintln(\"hi\")\n}\n"
	// +"func main() {\n\tprintln(\"hello\")\n}\n"
}

func ExampleHunks_create() {
	content := "hello\n"
	res := presentation.Hunks("/w/new.txt", nil, &content)
	fmt.Println(len(res.Diffs), res.Diffs[0].OldText == nil, res.Diffs[0].Line)
	// Output: 1 true 1
}

func ExampleHunks_fallback() {
	before, after := "a\n", "b\n"
	res := presentation.Hunks("/w/f", &before, &after, presentation.WithLimits(presentation.Limits{MaxBytes: 1}))
	fmt.Printf("%d whole-file diff: %s\n", len(res.Diffs), res.Fallback)
	// Output: 1 whole-file diff: too large
}

func ExampleResultView_MarshalJSON() {
	code := 1
	view := presentation.ResultView{Card: &presentation.TerminalCard{Output: "FAIL\n", ExitCode: &code}}
	out, _ := json.Marshal(view)
	fmt.Println(string(out))
	// Output: {"card":"terminal","output":"FAIL\n","exitCode":1}
}

func ExampleResultView_UnmarshalJSON() {
	// A card this reader does not know becomes a generic card.
	var view presentation.ResultView
	_ = json.Unmarshal([]byte(`{"card":"chart","title":"Sales","points":[1,2]}`), &view)
	card := view.Card.(*presentation.GenericCard)
	fmt.Println(view.Tag(), card.Title)
	// Output: generic Sales
}

func ExampleConsoleFallback() {
	code := 2
	fmt.Println(presentation.ConsoleFallback(&presentation.TerminalCard{Output: "$ make\nerror\n", ExitCode: &code}))
	// Output:
	// ```console
	// $ make
	// error
	// ```
	//
	// Exited with code 2
}

func ExampleRelativeTitle() {
	fmt.Println(presentation.RelativeTitle("/w/proj", "Move /w/proj/a.go to /tmp/a.go", "/w/proj/a.go", "/tmp/a.go"))
	// Output: Move a.go to /tmp/a.go
}
