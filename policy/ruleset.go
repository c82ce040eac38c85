package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-tools/dshd/registry"
)

// RuleSet is a set of allow, ask and deny rules plus the context that
// relative path patterns and subjects are resolved in. It is a plain value:
// copy it and set Cwd to bind settings rules to a session. Evaluate does not
// modify it, so a RuleSet that is no longer mutated may be shared between
// goroutines.
type RuleSet struct {
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
	// Cwd is the session's (absolute) working directory; relative subject
	// paths and anchored relative path patterns are resolved against it.
	// Leave it empty only when subjects are relative too: an anchored
	// relative pattern never matches an absolute path.
	Cwd string
	// Home expands path patterns starting with `~`; when empty such
	// patterns never match.
	Home string
}

// ParseRuleSet parses the allow, ask and deny lists of a settings file.
// Every invalid rule is reported (errors.Join of errors naming the list and
// index, each wrapping a *ParseError).
func ParseRuleSet(allow, ask, deny []string) (RuleSet, error) {
	var rs RuleSet
	var errs []error
	parse := func(list string, texts []string) []Rule {
		rules := make([]Rule, 0, len(texts))
		for i, text := range texts {
			r, err := ParseRule(text)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", list, i, err))
				continue
			}
			rules = append(rules, r)
		}
		return rules
	}
	rs.Allow = parse("allow", allow)
	rs.Ask = parse("ask", ask)
	rs.Deny = parse("deny", deny)
	return rs, errors.Join(errs...)
}

// Add appends a rule to the list of the decision (Allow, Ask or Deny),
// unless that list already holds it. It reports whether the rule was added.
func (s *RuleSet) Add(d Decision, r Rule) bool {
	list := s.list(d)
	if list == nil {
		return false
	}
	if slices.Contains(*list, r) {
		return false
	}
	*list = append(*list, r)
	return true
}

// Remove deletes a rule from every list and reports whether it was present.
func (s *RuleSet) Remove(r Rule) bool {
	removed := false
	for _, list := range []*[]Rule{&s.Allow, &s.Ask, &s.Deny} {
		before := len(*list)
		*list = slices.DeleteFunc(*list, func(x Rule) bool { return x == r })
		removed = removed || len(*list) != before
	}
	return removed
}

func (s *RuleSet) list(d Decision) *[]Rule {
	switch d {
	case Allow:
		return &s.Allow
	case Ask:
		return &s.Ask
	case Deny:
		return &s.Deny
	}
	return nil
}

// Evaluate decides a call of tool with the given policy subjects: Deny if a
// deny rule matches the call or any subject, else Ask likewise, else Allow if
// an allow rule matches the whole tool or every subject (at least one),
// else None. Verdict.Rule names the deciding rule (for allow by subjects,
// the rules that allowed them, joined with ", ").
func (s RuleSet) Evaluate(tool string, subjects []registry.Subject) Verdict {
	var small [4]subjectView
	views := small[:0]
	if len(subjects) > len(small) {
		views = make([]subjectView, 0, len(subjects))
	}
	for _, subj := range subjects {
		views = append(views, subjectView{Subject: subj, cwd: s.Cwd})
	}
	return s.evaluate(tool, views)
}

func (s RuleSet) evaluate(tool string, subjects []subjectView) Verdict {
	if rule, ok := s.restrictiveMatch(s.Deny, tool, subjects); ok {
		return Verdict{Decision: Deny, Rule: rule.String()}
	}
	if rule, ok := s.restrictiveMatch(s.Ask, tool, subjects); ok {
		return Verdict{Decision: Ask, Rule: rule.String()}
	}
	var matching []Rule
	for _, r := range s.Allow {
		if !r.MatchesTool(tool) {
			continue
		}
		if !r.HasPattern {
			return Verdict{Decision: Allow, Rule: r.String()}
		}
		matching = append(matching, r)
	}
	if len(subjects) == 0 || len(matching) == 0 {
		return Verdict{}
	}
	var used []string
	for j := range subjects {
		i := slices.IndexFunc(matching, func(r Rule) bool { return s.matchesSubject(r, &subjects[j], false) })
		if i < 0 {
			return Verdict{}
		}
		if text := matching[i].String(); !slices.Contains(used, text) {
			used = append(used, text)
		}
	}
	return Verdict{Decision: Allow, Rule: strings.Join(used, ", ")}
}

// restrictiveMatch returns the first rule of the list matching the call as
// a deny or ask rule: tool-wide, or any subject.
func (s RuleSet) restrictiveMatch(rules []Rule, tool string, subjects []subjectView) (Rule, bool) {
	for _, r := range rules {
		if !r.MatchesTool(tool) {
			continue
		}
		if !r.HasPattern {
			return r, true
		}
		for i := range subjects {
			if s.matchesSubject(r, &subjects[i], true) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// matchesSubject matches a pattern rule against one subject.
func (s RuleSet) matchesSubject(r Rule, subj *subjectView, restrictive bool) bool {
	switch subj.Kind {
	case registry.SubjectPath:
		return matchPathView(r.Pattern, subj, s.Home)
	case registry.SubjectCommand:
		return parseCommandPattern(r.Pattern).matches(subj, restrictive)
	default:
		return wildcardMatch(r.Pattern, subj.Value)
	}
}

// EvaluateOnDisk decides like [RuleSet.Evaluate], but a path subject is
// judged both as written and where the kernel would open it (symlinks
// followed, see [Resolve]): deny and ask rules match either form, and only
// an allow rule that matches where the call lands allows it. So a symlink
// neither slips past a deny rule (src/link/key.pem → secrets/key.pem) nor
// turns an allow rule for one directory into access to wherever a link in
// it points. Relative patterns anchor at the resolved Cwd for the second
// form. A path that cannot be resolved is judged as written (root
// confinement refuses it on its own).
func (s RuleSet) EvaluateOnDisk(tool string, subjects []registry.Subject) Verdict {
	return s.EvaluateLanded(tool, subjects, Land(s.Cwd, subjects))
}

// Landing is where a call's path subjects land on disk: each resolved
// against the cwd with [Resolve], and the cwd itself resolved. It is the
// one place that decides where a path lands: rules judge it, root
// confinement and protected paths check it, and the tool opens exactly it
// (the bridge hands it to the tool). Landing a call costs an lstat per
// path component (a root's own components too, unless landed through
// [ResolvedRoots]), so a caller that judges one call against several rule
// sets, or several times, lands it once.
type Landing struct {
	cwd    string             // the resolved cwd
	landed []registry.Subject // nil when no path subject resolved
	paths  []LandedPath       // one per path subject, in order
	// seen is what the landing's lstat calls found, for
	// [Landing.Protected] to judge the protected entries through: one
	// check's view of the disk (see lookups).
	seen *lookups
}

// LandedPath is where one path subject of a call lands.
type LandedPath struct {
	// Written is the path as the call wrote it.
	Written string
	// Abs is where it lands: absolute, every existing symlink followed
	// (a dangling final one too), ".." applied after the symlinks before
	// it. Empty when Err is set.
	Abs string
	// Root is the resolved session root that holds Abs, or "" when Abs
	// lies outside every root.
	Root string
	// Err says why the path does not resolve (a symlink loop, a NUL byte,
	// a name too long); such a path must not be opened.
	Err error
}

// Land computes where subjects land, relative paths taken from cwd, which
// is the only root.
func Land(cwd string, subjects []registry.Subject) Landing {
	return LandIn([]string{cwd}, subjects)
}

// LandIn computes where subjects land, relative paths taken from roots[0]
// (the session's cwd), and which of roots (each resolved too) holds each
// landing. With no roots, or an empty cwd, nothing lands.
func LandIn(roots []string, subjects []registry.Subject) Landing {
	return (*ResolvedRoots)(nil).LandIn(roots, subjects)
}

// LandIn is [LandIn] with the roots resolved through rr: each root is
// walked once and, on later calls, only checked to be the same directory
// still (see [ResolvedRoots]). A nil rr resolves every root each time.
func (rr *ResolvedRoots) LandIn(roots []string, subjects []registry.Subject) Landing {
	if len(roots) == 0 || roots[0] == "" {
		return Landing{}
	}
	cwd := roots[0]
	m := &lookups{} // the roots and the paths share directories
	l := Landing{cwd: cwd, seen: m}
	var resolvedRoots []string
	rcwd := "" // the resolved cwd; relative paths are walked from it
	rootsDone := false
	for i, subj := range subjects {
		if subj.Kind != registry.SubjectPath {
			continue
		}
		if !rootsDone {
			resolvedRoots = make([]string, 0, len(roots))
			for j, r := range roots {
				if resolved, err := rr.resolve(m, r); err == nil {
					resolvedRoots = append(resolvedRoots, resolved)
					if j == 0 {
						rcwd = resolved
					}
				}
			}
			rootsDone = true
		}
		lp := LandedPath{Written: subj.Value}
		var abs string
		var err error
		if rcwd != "" {
			abs, err = resolveFrom(m, rcwd, subj.Value)
		} else {
			abs, err = m.resolve(cwd, subj.Value)
		}
		if err != nil {
			lp.Err = err
			l.paths = append(l.paths, lp)
			continue
		}
		lp.Abs = abs
		for _, root := range resolvedRoots {
			if within(root, abs) {
				lp.Root = root
				break
			}
		}
		l.paths = append(l.paths, lp)
		if l.landed == nil {
			l.landed = slices.Clone(subjects)
		}
		l.landed[i].Value = abs
	}
	if l.landed != nil && rcwd != "" {
		l.cwd = rcwd
	}
	return l
}

// Subjects returns subjects with each path subject replaced by where it
// lands (one that does not resolve stays as written); subjects must be
// the ones landed.
func (l Landing) Subjects(subjects []registry.Subject) []registry.Subject {
	if l.landed == nil {
		return subjects
	}
	return slices.Clone(l.landed)
}

// Cwd is the resolved working directory the paths were landed from.
func (l Landing) Cwd() string { return l.cwd }

// Paths returns where each path subject lands, in the order of the
// subjects.
func (l Landing) Paths() []LandedPath { return slices.Clone(l.paths) }

// Lookup returns where the path subject written as written lands.
func (l Landing) Lookup(written string) (LandedPath, bool) {
	for _, p := range l.paths {
		if p.Written == written {
			return p, true
		}
	}
	return LandedPath{}, false
}

// Same reports whether m lands every path where l does (same landing, same
// root, resolving or not): a call judged on l may act on m.
func (l Landing) Same(m Landing) bool {
	if len(l.paths) != len(m.paths) {
		return false
	}
	for i, p := range l.paths {
		q := m.paths[i]
		if p.Written != q.Written || p.Abs != q.Abs || p.Root != q.Root || (p.Err == nil) != (q.Err == nil) {
			return false
		}
	}
	return true
}

// EvaluateLanded is [RuleSet.EvaluateOnDisk] with the landing computed
// beforehand: l must be Land(s.Cwd, subjects).
func (s RuleSet) EvaluateLanded(tool string, subjects []registry.Subject, l Landing) Verdict {
	written := s.Evaluate(tool, subjects)
	if written.Decision == Deny || l.landed == nil {
		return written // denied as written, or no path to judge again
	}
	onDisk := s
	onDisk.Cwd = l.cwd
	v := onDisk.Evaluate(tool, l.landed)
	if v.Decision != Deny && written.Decision == Ask {
		return written
	}
	return v
}
