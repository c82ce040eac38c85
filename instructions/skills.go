package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// SkillFile is the file that makes a directory a skill.
const SkillFile = "SKILL.md"

// Limits of the Agent Skills format.
const (
	maxSkillName        = 64
	maxSkillDescription = 1024
	// maxBundled bounds the bundled files a skill lists.
	maxBundled = 200
)

// skillName is the Agent Skills name: lowercase letters, digits and
// single hyphens, not at either end.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skill is one skill: a directory with a SKILL.md whose front matter names
// and describes it.
type Skill struct {
	// Name is the front matter's name, which is also the directory's name.
	Name string
	// Description says when to use the skill; the system prompt lists it.
	Description string
	// Dir is the skill's directory; Path its SKILL.md.
	Dir, Path string
	// User is true for a skill of the user's configuration directory.
	User bool
	base string // confines reads (see readBounded)
}

// Body reads the skill's instructions: SKILL.md without its front matter.
func (s Skill) Body() (string, error) {
	text, _, err := readBounded(s.base, s.Path)
	if err != nil {
		return "", err
	}
	_, body, err := ParseFrontMatter([]byte(text))
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.Path, err)
	}
	return body, nil
}

// Bundled lists the files of the skill's directory other than SKILL.md,
// relative to Dir, sorted, at most maxBundled of them; more says some were
// left out.
func (s Skill) Bundled() (files []string, more bool) {
	filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != s.Dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if path == s.Path {
			return nil
		}
		if len(files) == maxBundled {
			more = true
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(s.Dir, path)
		if err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	return files, more
}

// Problem is a file dshd could not use (an invalid skill or command, a
// command clashing with a built-in one, a duplicate), said once to the
// user.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// loadSkills reads the skills (directories with a SKILL.md) of dirs,
// earlier directories winning over later ones for the same name.
func loadSkills(dirs []sourceDir) ([]Skill, []Problem) {
	return loadEach(dirs, "skill", func(n string) string { return fmt.Sprintf("skill %q", n) }, func(s Skill) string { return s.Name },
		func(d sourceDir, e fs.DirEntry) (string, Skill, error) {
			dir := filepath.Join(d.dir, e.Name())
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return "", Skill{}, nil
			}
			path := filepath.Join(dir, SkillFile)
			if _, err := os.Stat(path); err != nil {
				return "", Skill{}, nil
			}
			sk, err := parseSkill(d.base, dir, path, d.user)
			return path, sk, err
		})
}

// parseSkill reads and checks a SKILL.md.
func parseSkill(base, dir, path string, user bool) (Skill, error) {
	text, _, err := readBounded(base, path)
	if err != nil {
		return Skill{}, err
	}
	fm, _, err := ParseFrontMatter([]byte(text))
	if err != nil {
		return Skill{}, err
	}
	if len(fm.fields) == 0 {
		return Skill{}, ErrNoFrontMatter
	}
	name, ok, err := fm.String("name")
	if err != nil {
		return Skill{}, err
	}
	if !ok || name == "" {
		return Skill{}, errors.New("the front matter has no name")
	}
	if len(name) > maxSkillName || !skillName.MatchString(name) {
		return Skill{}, fmt.Errorf("invalid name %q: use at most %d lowercase letters, digits and single hyphens", name, maxSkillName)
	}
	if base := filepath.Base(dir); base != name {
		return Skill{}, fmt.Errorf("the name %q differs from the directory name %q", name, base)
	}
	desc, ok, err := fm.String("description")
	if err != nil {
		return Skill{}, err
	}
	desc = strings.TrimSpace(desc)
	if !ok || desc == "" {
		return Skill{}, errors.New("the front matter has no description")
	}
	if utf8.RuneCountInString(desc) > maxSkillDescription {
		return Skill{}, fmt.Errorf("the description is longer than %d characters", maxSkillDescription)
	}
	return Skill{Name: name, Description: desc, Dir: dir, Path: path, User: user, base: base}, nil
}
