package tools_test

import (
	"fmt"

	"github.com/dsh-tools/dshd/tools"
)

func ExampleApplyEdits() {
	replaceAll := true
	out, n, err := tools.ApplyEdits("a := 1\nb := a + 1\n", []tools.Edit{
		{Old: "a := 1", New: "x := 1"},
		{Old: "a", New: "x", ReplaceAll: &replaceAll},
	})
	fmt.Printf("%q %d %v\n", out, n, err)
	_, _, err = tools.ApplyEdits("f(x)\nf(x)\n", []tools.Edit{{Old: "f(x)", New: "g(x)"}})
	fmt.Println(err)
	// Output:
	// "x := 1\nb := x + 1\n" 2 <nil>
	// old occurs 2 times (at lines 1, 2); include more surrounding lines to make it unique, or set replaceAll to replace all of them
}
