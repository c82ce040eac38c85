package credentials

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/llm"
)

func TestSaveLoadRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "dshd", FileName)
	if c, err := Load(path); c != nil || err != nil {
		t.Fatalf("Load of nothing = %v, %v", c, err)
	}
	want := &Credentials{Service: "openrouter", Model: "m", APIKey: "sk-or-secret"}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
		}
		di, _ := os.Stat(filepath.Dir(path))
		if di.Mode().Perm() != 0o700 {
			t.Errorf("directory mode %v; want 0700", di.Mode().Perm())
		}
	}
	got, err := Load(path)
	if err != nil || *got != *want {
		t.Fatalf("Load = %+v, %v; want %+v", got, err, want)
	}
	if got.Provider() != "openai" || got.Endpoint() != "https://openrouter.ai/api/v1" {
		t.Errorf("provider %q endpoint %q", got.Provider(), got.Endpoint())
	}
	// Saving again replaces the file and leaves no temporary file behind.
	if err := Save(path, &Credentials{Service: "local", BaseURL: "http://127.0.0.1:1/v1", Model: "llama"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %v", entries)
	}
	if removed, err := Remove(path); !removed || err != nil {
		t.Errorf("Remove = %v, %v", removed, err)
	}
	if removed, err := Remove(path); removed || err != nil {
		t.Errorf("second Remove = %v, %v", removed, err)
	}
}

func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"junk":    "{",
		"service": `{"service":"nope","model":"m"}`,
		"model":   `{"service":"openai"}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "dshd auth") {
			t.Errorf("%s: Load error %v, want one that says to run dshd auth", name, err)
		}
	}
}

// The key never shows in what Credentials print.
func TestKeyRedacted(t *testing.T) {
	c := &Credentials{Service: "openai", Model: "m", APIKey: "sk-very-secret"}
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "sk-very-secret") {
			t.Errorf("printed %s", s)
		}
	}
}

func TestCheck(t *testing.T) {
	const good = "sk-good"
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.Header.Get("x-api-key") != "" {
			key = r.Header.Get("x-api-key")
			if r.Header.Get("anthropic-version") == "" {
				http.Error(w, "no version", http.StatusBadRequest)
				return
			}
		}
		switch {
		case key == "sk-broken":
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		case key != good:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"invalid x-api-key"}}`))
		default:
			w.Write([]byte(`{"data":[{"id":"model-a"},{"id":"model-b"}]}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, s := range Services {
		base := srv.URL
		if s.Provider == "openai" {
			base += "/v1"
		}
		ids, err := Check(ctx, srv.Client(), s, base, good)
		if err != nil || !slices.Equal(ids, []string{"model-a", "model-b"}) {
			t.Errorf("%s: good key: %v, %v", s.ID, ids, err)
		}
		_, err = Check(ctx, srv.Client(), s, base, "sk-bad")
		if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "invalid x-api-key") {
			t.Errorf("%s: bad key: %v", s.ID, err)
		}
		_, err = Check(ctx, srv.Client(), s, base, llm.Secret("sk-broken"))
		if err == nil || errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "503") {
			t.Errorf("%s: failing server: %v", s.ID, err)
		}
	}
	var want []string
	for _, p := range []string{"/v1/models", "/v1/models", "/v1/key", "/v1/models"} { // in Services' order
		want = append(want, p, p, p)
	}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	if _, err := Check(ctx, srv.Client(), Services[3], "http://127.0.0.1:1/v1", ""); err == nil || !strings.Contains(err.Error(), "could not reach") {
		t.Errorf("unreachable: %v", err)
	}
}
