package testsupport

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckREADMESnippet fails t unless the module's README.md holds, right
// after the line "<!-- snippet: FILE FUNC -->", a ```go block whose text is
// the body of function FUNC in FILE (a path from the module root), less one
// level of indentation. The README's Go snippets are bodies of compiled
// Example tests, and this keeps them from drifting apart.
func CheckREADMESnippet(t testing.TB, file, fn string) {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := funcBody(filepath.Join(root, file), fn)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- snippet: " + file + " " + fn + " -->"
	got, ok := snippetAfter(readme, marker)
	if !ok {
		t.Fatalf("README.md has no ```go block right after %q; it should hold:\n%s", marker, want)
	}
	if got != want {
		t.Errorf("README.md's snippet after %q is not the body of %s in %s.\nREADME:\n%s\nExample:\n%s", marker, fn, file, got, want)
	}
}

// funcBody returns the text between the braces of function fn in file,
// without the first level of indentation.
func funcBody(file, fn string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == fn {
			body := src[fset.Position(fd.Body.Lbrace).Offset+1 : fset.Position(fd.Body.Rbrace).Offset]
			var out []string
			for line := range strings.SplitSeq(strings.Trim(string(body), "\n"), "\n") {
				out = append(out, strings.TrimPrefix(line, "\t"))
			}
			return strings.Join(out, "\n"), nil
		}
	}
	return "", os.ErrNotExist
}

// snippetAfter returns the ```go block on the line after marker.
func snippetAfter(readme []byte, marker string) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != marker {
			continue
		}
		if !sc.Scan() || sc.Text() != "```go" {
			return "", false
		}
		var lines []string
		for sc.Scan() {
			if sc.Text() == "```" {
				return strings.Join(lines, "\n"), true
			}
			lines = append(lines, sc.Text())
		}
		return "", false
	}
	return "", false
}
