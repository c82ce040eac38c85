package tools

import (
	"testing"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// TestReadCardIsForAPerson: the read card shows the file's text in a code
// block of its language, without the line numbers the model gets, and the
// note about the rest of the file after it.
func TestReadCardIsForAPerson(t *testing.T) {
	numbered, _, _ := NumberLines("# Scratch\n\tindented `x`\n", 1, 0, 0)
	for _, tc := range []struct {
		name string
		path string
		r    registry.Result
		want []string
	}{
		{"markdown", "README.md", registry.TextResult(numbered), []string{"```markdown\n# Scratch\n\tindented `x`\n```"}},
		{"go with a note", "main.go", registry.TextResult(numbered + "\n[Showing lines 1-2; the file continues. Call read with offset=3 to read further.]\n"),
			[]string{"```go\n# Scratch\n\tindented `x`\n```", "[Showing lines 1-2; the file continues. Call read with offset=3 to read further.]"}},
		{"unknown language", "data.xyz", registry.TextResult(numbered), []string{"```\n# Scratch\n\tindented `x`\n```"}},
		{"empty file", "a.txt", registry.TextResult("(the file is empty)"), []string{"(the file is empty)"}},
		{"failure", "gone.go", registry.ErrorResult(registry.CodeToolError, "gone.go does not exist."), []string{"gone.go does not exist."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := presentRead(nil, ReadArgs{Path: tc.path}, tc.r)
			card, ok := v.Card.(*presentation.GenericCard)
			if !ok {
				t.Fatalf("card %T", v.Card)
			}
			var got []string
			for _, c := range card.Content {
				got = append(got, c.Text)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("content %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("content[%d] = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
