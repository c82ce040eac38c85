package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/internal/credentials"
	"github.com/dsh-tools/dshd/model/llm"
)

// `dshd auth` sets up the model provider in a terminal: the editor runs
// it for the terminal auth method dshd advertises, or a user runs it by
// hand. `dshd logout` removes what it stored. Both work on the real
// terminal (stdin and stdout), never on a protocol stream.

// errCancelled ends a prompt the user left (Ctrl+D, Ctrl+C, end of input).
var errCancelled = errors.New("cancelled")

// maxKeyTries bounds how often a rejected key is asked for again.
const maxKeyTries = 3

// credentialsPath is the credentials file beside the user settings file.
func credentialsPath(getenv func(string) string) (string, error) {
	p := userSettingsPath(getenv)
	if p == "" {
		return "", errors.New("no user configuration directory (set XDG_CONFIG_HOME)")
	}
	return filepath.Join(filepath.Dir(p), credentials.FileName), nil
}

// runAuth is `dshd auth [--base-url URL]`.
func runAuth(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("dshd auth", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	baseURL := fs.String("base-url", "", "the provider's endpoint, when it is not the public one (a proxy, a gateway)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: dshd auth [--base-url URL]\n\nAsks for a model provider and its API key, checks the key and stores both,\nreadable only by you, for dshd to use. Remove them with dshd logout.\n\n")
		fmt.Fprint(stderr, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "dshd auth: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "dshd auth: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return exitUsage
	}
	path, err := credentialsPath(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "dshd auth: %v\n", err)
		return exitError
	}
	p := newPrompter(stdin, stdout)
	defer p.stop()
	c, err := authDialog(ctx, p, path, *baseURL, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		if errors.Is(err, errCancelled) {
			fmt.Fprintln(stdout, "\nCancelled; nothing was saved.")
		} else {
			fmt.Fprintf(stdout, "\n%v\nNothing was saved.\n", err)
		}
		return exitError
	}
	if err := credentials.Save(path, c); err != nil {
		fmt.Fprintf(stdout, "%v\nNothing was saved.\n", err)
		return exitError
	}
	s, _ := credentials.Lookup(c.Service)
	fmt.Fprintf(stdout, "\nSaved %s (model %s) to %s, readable only by you.\n", s.Name, c.Model, path)
	fmt.Fprintln(stdout, "dshd uses it whenever no --provider flag, DSHD_PROVIDER or settings file names a provider.")
	fmt.Fprintln(stdout, "To remove it: dshd logout")
	return exitOK
}

// authDialog asks for the provider, the key and the model, checking the
// key on the way. Nothing is written here.
func authDialog(ctx context.Context, p *prompter, path, baseURL string, client *http.Client) (*credentials.Credentials, error) {
	fmt.Fprintln(p.out, "Set up the model provider dshd uses. Ctrl+C cancels; nothing is saved before the end.")
	if old, err := credentials.Load(path); err == nil && old != nil {
		s, _ := credentials.Lookup(old.Service)
		fmt.Fprintf(p.out, "This replaces the provider set up before (%s, model %s).\n", s.Name, old.Model)
	}
	fmt.Fprintln(p.out)
	for i, s := range credentials.Services {
		fmt.Fprintf(p.out, "  %d) %s\n", i+1, s.Name)
	}
	var svc credentials.Service
	for {
		a, err := p.line(fmt.Sprintf("Provider [1-%d]: ", len(credentials.Services)))
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(a)
		if err == nil && n >= 1 && n <= len(credentials.Services) {
			svc = credentials.Services[n-1]
			break
		}
		fmt.Fprintf(p.out, "Please answer a number from 1 to %d.\n", len(credentials.Services))
	}
	c := &credentials.Credentials{Service: svc.ID, BaseURL: baseURL}
	if svc.ID == "local" && baseURL == "" {
		u, err := p.lineDefault("Server URL", svc.BaseURL)
		if err != nil {
			return nil, err
		}
		c.BaseURL = u
	}
	var models []string
	for try := 1; ; try++ {
		help := "Enter for none"
		if svc.KeyHelp != "" {
			help = svc.KeyHelp
		}
		key, err := p.secret(fmt.Sprintf("API key (%s; typing is hidden): ", help))
		if err != nil {
			return nil, err
		}
		if key == "" && svc.KeyHelp != "" {
			fmt.Fprintln(p.out, "A key is needed.")
			continue
		}
		c.APIKey = llm.Secret(key)
		fmt.Fprintf(p.out, "Checking the key with %s… ", shortName(svc))
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		models, err = credentials.Check(cctx, client, svc, c.Endpoint(), c.APIKey)
		cancel()
		if err == nil {
			fmt.Fprintln(p.out, "ok.")
			break
		}
		if errors.Is(err, credentials.ErrRejected) {
			fmt.Fprintf(p.out, "%v.\n", err)
			if try >= maxKeyTries {
				return nil, fmt.Errorf("%s rejected %d keys", shortName(svc), try)
			}
			fmt.Fprintln(p.out, "Try again, or press Ctrl+C to cancel.")
			continue
		}
		fmt.Fprintf(p.out, "could not check it: %v.\n", err)
		yes, err := p.line("Save it anyway? [y/N]: ")
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(yes, "y") && !strings.EqualFold(yes, "yes") {
			return nil, errCancelled
		}
		break
	}
	def := svc.DefaultModel
	if def == "" && len(models) > 0 {
		fmt.Fprintf(p.out, "The server offers: %s\n", strings.Join(first(models, 8), ", "))
		def = models[0]
	}
	for c.Model == "" {
		m, err := p.lineDefault("Model", def)
		if err != nil {
			return nil, err
		}
		if m == "" {
			fmt.Fprintln(p.out, "A model name is needed.")
		}
		c.Model = m
	}
	return c, nil
}

func shortName(s credentials.Service) string {
	if s.ID == "local" {
		return "the server"
	}
	return s.Name
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}

// runLogout is `dshd logout`.
func runLogout(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "Usage: dshd logout\n\nRemoves the credentials dshd auth stored.\n")
		if args[0] == "-h" || args[0] == "--help" {
			return exitOK
		}
		return exitUsage
	}
	path, err := credentialsPath(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "dshd logout: %v\n", err)
		return exitError
	}
	removed, err := credentials.Remove(path)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "dshd logout: %v\n", err)
		return exitError
	case removed:
		fmt.Fprintf(stdout, "Removed the stored credentials (%s).\n", path)
	default:
		fmt.Fprintf(stdout, "No stored credentials (%s).\n", path)
	}
	return exitOK
}

// prompter asks questions on a terminal, or on plain input (a pipe), and
// turns Ctrl+C into a cancellation that leaves the terminal as it found
// it.
type prompter struct {
	in   *bufio.Reader
	out  io.Writer
	fd   int // the terminal's descriptor, or -1
	sigs chan os.Signal

	mu      sync.Mutex
	restore func() // puts echo back while a key is read
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	p := &prompter{in: bufio.NewReader(in), out: out, fd: -1}
	if f, ok := in.(*os.File); ok && isTerminal(int(f.Fd())) {
		p.fd = int(f.Fd())
	}
	p.sigs = make(chan os.Signal, 1)
	signal.Notify(p.sigs, os.Interrupt)
	go func() {
		if _, ok := <-p.sigs; !ok {
			return
		}
		p.mu.Lock()
		if p.restore != nil {
			p.restore()
		}
		fmt.Fprintln(p.out, "\nCancelled; nothing was saved.")
		// A read of the terminal cannot be interrupted portably, and
		// nothing is written before the end: leaving now loses nothing.
		os.Exit(130)
	}()
	return p
}

func (p *prompter) stop() {
	signal.Stop(p.sigs)
	close(p.sigs)
}

// line asks prompt and returns the answer without surrounding space. End
// of input is errCancelled.
func (p *prompter) line(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	s, err := p.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errCancelled
		}
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// lineDefault asks for a value, offering def for an empty answer.
func (p *prompter) lineDefault(what, def string) (string, error) {
	prompt := what + ": "
	if def != "" {
		prompt = fmt.Sprintf("%s [%s]: ", what, def)
	}
	s, err := p.line(prompt)
	if s == "" {
		s = def
	}
	return s, err
}

// secret asks for a key without echoing it on a terminal. Echo goes off
// before the prompt shows, so nothing typed ahead is shown either.
func (p *prompter) secret(prompt string) (string, error) {
	if p.fd >= 0 {
		if restore, err := echoOff(p.fd); err == nil {
			p.mu.Lock()
			p.restore = restore
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				p.restore()
				p.restore = nil
				p.mu.Unlock()
				fmt.Fprintln(p.out) // the Enter was not echoed either
			}()
		}
	}
	return p.line(prompt)
}

// authMethodID is the terminal auth method dshd advertises.
const authMethodID = "dshd-auth"

// auth is what the bridge advertises: one terminal method, which makes the
// editor run `dshd auth` in a terminal (clients that cannot are offered
// nothing, and the demo or the configured provider simply goes on), and
// logout, which removes the stored credentials. No session ever waits for
// authentication: without a provider the embedded demo answers, and says
// how to set one up.
func (d *daemon) auth() *bridge.Auth {
	desc := "Choose Anthropic, OpenAI, OpenRouter or a local OpenAI-compatible server and enter an API key; it is checked and stored for dshd, readable only by you."
	return &bridge.Auth{
		Methods: []acp.AuthMethod{{Value: &acp.AuthMethodTerminal{
			ID: authMethodID, Name: "Set up a model provider", Description: &desc, Args: []string{"auth"},
		}}},
		Logout: d.logout,
	}
}

// logout removes the stored credentials; sessions go back to what the
// flags and settings say (the demo when they say nothing) from their next
// model request.
func (d *daemon) logout(context.Context) error {
	if d.credsPath == "" {
		return nil
	}
	if _, err := credentials.Remove(d.credsPath); err != nil {
		return err
	}
	if d.creds.Swap(nil) != nil {
		d.apply(d.live.Current())
	}
	d.log.Info("stored credentials removed", "path", d.credsPath)
	return nil
}
