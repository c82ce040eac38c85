package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// GlobArgs are the arguments of the glob tool.
type GlobArgs struct {
	Pattern string  `json:"pattern" desc:"A glob such as \"**/*.go\", \"src/**/*.{ts,tsx}\" or \"*.md\". A pattern without a slash matches file names at any depth; with a slash it matches paths relative to the search directory, where * stays within one directory and ** spans any number." min:"1"`
	Path    *string `json:"path,omitempty" desc:"The directory to search (default: the session's working directory)."`
}

const globDoc = `Find files by name pattern. Returns absolute paths, most recently modified first. Files ignored by .gitignore and the .git directory are skipped. Results are capped; narrow the pattern or the path when the output says so.`

func (t *toolset) globTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[GlobArgs]{
		Name: "glob", Title: "Find files", Description: globDoc, Kind: presentation.KindSearch,
		PresentCall: func(call registry.Call, a GlobArgs) presentation.CallView {
			title := "Find " + a.Pattern
			if a.Path != nil {
				title += " in " + *a.Path
			}
			return presentation.CallView{Title: title, Kind: presentation.KindSearch, Locations: location(call, GlobDir(derefOr(a.Path, "."), a.Pattern), nil)}
		},
		PresentResult: genericResult[GlobArgs],
		Subjects: func(call registry.Call, a GlobArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: GlobDir(derefOr(a.Path, "."), a.Pattern)}}
		},
	}, t.glob)
}

func genericResult[A any](call registry.Call, a A, r registry.Result) *presentation.ResultView {
	return &presentation.ResultView{Card: &presentation.GenericCard{Content: r.Content}}
}

func derefOr(p *string, d string) string {
	if p == nil || *p == "" {
		return d
	}
	return *p
}

func (t *toolset) glob(ctx context.Context, call registry.Call, a GlobArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	// The walk starts where the policy landed the glob's directory.
	dir := derefOr(a.Path, ".")
	l, err := h.Land(GlobDir(dir, a.Pattern))
	if err != nil {
		return toolError(fmt.Sprintf("cannot search %s: %v", GlobDir(dir, a.Pattern), err))
	}
	_, rest, anchored := globRoot(dir, a.Pattern)
	matches, capped, err := globWalk(ctx, l.Abs, rest, anchored, t.opts.GlobLimit)
	if err != nil {
		if ctx.Err() != nil {
			return registry.Result{}, ctx.Err()
		}
		return toolError(err.Error())
	}
	if len(matches) == 0 {
		return registry.TextResult("No files found."), nil
	}
	var sb strings.Builder
	for _, m := range matches {
		sb.WriteString(m.Path)
		sb.WriteByte('\n')
	}
	if capped {
		fmt.Fprintf(&sb, "[Showing the %d most recently modified matches; more exist. Use a narrower pattern or path.]\n", len(matches))
	}
	return registry.TextResult(sb.String()), nil
}

// GrepArgs are the arguments of the grep tool.
type GrepArgs struct {
	Pattern    string  `json:"pattern" desc:"A regular expression (Go RE2 syntax: no backreferences or lookaround). ^ and $ match at line boundaries." min:"1"`
	Path       *string `json:"path,omitempty" desc:"The file or directory to search (default: the session's working directory)."`
	Glob       *string `json:"glob,omitempty" desc:"Only search files matching this glob, for example \"*.go\" or \"src/**/*.{ts,tsx}\"."`
	IgnoreCase *bool   `json:"ignoreCase,omitempty" desc:"Match letters regardless of case." default:"false"`
	Context    *int    `json:"context,omitempty" desc:"Lines of context to show before and after each match." min:"0" max:"20"`
	FilesOnly  *bool   `json:"filesOnly,omitempty" desc:"List only the paths of matching files." default:"false"`
}

const grepDoc = `Search file contents with a regular expression. Output lines are "path:line:text" for matches and "path-line-text" for context lines, paths relative to the working directory; with filesOnly, one path per line.
Files ignored by .gitignore, the .git directory and binary files are skipped. Results are capped; narrow the pattern, path or glob when the output says so. Use this rather than running grep or rg through bash.`

func (t *toolset) grepTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[GrepArgs]{
		Name: "grep", Title: "Search", Description: grepDoc, Kind: presentation.KindSearch,
		PresentCall: func(call registry.Call, a GrepArgs) presentation.CallView {
			title := "Search " + a.Pattern
			if a.Path != nil {
				title += " in " + *a.Path
			}
			if a.Glob != nil {
				title += " (" + *a.Glob + ")"
			}
			return presentation.CallView{Title: title, Kind: presentation.KindSearch, Locations: location(call, derefOr(a.Path, "."), nil)}
		},
		PresentResult: genericResult[GrepArgs],
		Subjects: func(call registry.Call, a GrepArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: derefOr(a.Path, ".")}}
		},
	}, t.grep)
}

func (t *toolset) grep(ctx context.Context, call registry.Call, a GrepArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	cwd := h.Cwd()
	l, err := h.Land(derefOr(a.Path, "."))
	if err != nil {
		return toolError(fmt.Sprintf("cannot search %s: %v", derefOr(a.Path, "."), err))
	}
	root := l.Abs
	// Matches are shown relative to the cwd; the landing is symlink-free,
	// so compare with the cwd's own landing too.
	realCwd, rerr := filepath.EvalSymlinks(cwd)
	if rerr != nil {
		realCwd = cwd
	}
	o := GrepOptions{
		Pattern: a.Pattern, Glob: derefOr(a.Glob, ""), IgnoreCase: boolOr(a.IgnoreCase, false),
		Context: intOr(a.Context, 0), FilesOnly: boolOr(a.FilesOnly, false),
		Limit: t.opts.GrepLimit, MaxLineBytes: t.opts.MaxLineBytes,
	}
	res, err := Grep(ctx, root, o)
	if err != nil {
		if ctx.Err() != nil {
			return registry.Result{}, ctx.Err()
		}
		return toolError(err.Error())
	}
	if len(res.Files) == 0 {
		return registry.TextResult("No matches."), nil
	}
	var sb strings.Builder
	for i, f := range res.Files {
		p := presentation.RelativePath(realCwd, f.Path)
		if o.FilesOnly {
			sb.WriteString(p + "\n")
			continue
		}
		if i > 0 && o.Context > 0 {
			sb.WriteString("--\n")
		}
		prev := 0
		for _, l := range f.Lines {
			if o.Context > 0 && prev > 0 && l.Line > prev+1 {
				sb.WriteString("--\n")
			}
			sep := "-"
			if l.IsMatch {
				sep = ":"
			}
			fmt.Fprintf(&sb, "%s%s%d%s%s\n", p, sep, l.Line, sep, l.Text)
			prev = l.Line
		}
	}
	if res.Capped {
		what := "matching lines"
		if o.FilesOnly {
			what = "files"
		}
		fmt.Fprintf(&sb, "[Capped at %d %s; more exist. Narrow the pattern, path or glob.]\n", res.Matches, what)
	}
	return registry.TextResult(sb.String()), nil
}
