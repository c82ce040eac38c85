package bridge

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/structured"
)

func TestOutputSchemaOf(t *testing.T) {
	on := New(Options{StructuredTurns: true, Logger: quietLogger()})
	off := New(Options{Logger: quietLogger()})
	const schema = `{"type":"object","properties":{"a":{"type":"string"}}}`
	tests := []struct {
		name    string
		agent   *Agent
		meta    string
		want    string
		wantErr string
	}{
		{"no meta", on, ``, ``, ``},
		{"foreign meta", on, `{"other":{"outputSchema":{"type":"string"}}}`, ``, ``},
		{"ours without schema", on, `{"dshd":{}}`, ``, ``},
		{"null schema", on, `{"dshd":{"outputSchema":null}}`, ``, ``},
		{"schema", on, `{"dshd":{"outputSchema":` + schema + `}}`, schema, ``},
		{"ignored without the capability", off, `{"dshd":{"outputSchema":{"type":"string"}}}`, ``, ``},
		{"unsupported", on, `{"dshd":{"outputSchema":{"type":"string","format":"email"}}}`, ``, `format`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.agent.outputSchemaOf(acp.Meta(tt.meta))
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, acp.ErrInvalidParams) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want invalid params naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("= %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestSetStructured(t *testing.T) {
	tr := &Turn{outputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}
	var ve *structured.ValidationError
	if err := tr.SetStructured(json.RawMessage(`{"n":"x"}`)); !errors.As(err, &ve) {
		t.Fatalf("invalid value: err = %v", err)
	}
	if m := tr.structuredMeta(acp.StopEndTurn); !strings.Contains(string(m), "structuredError") {
		t.Fatalf("meta without a value = %s", m)
	}
	if err := tr.SetStructured(json.RawMessage(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	if m := tr.structuredMeta(acp.StopEndTurn); string(m) != `{"dshd":{"structured":{"n":2}}}` {
		t.Fatalf("meta = %s", m)
	}
	if m := tr.structuredMeta(acp.StopCancelled); m != nil {
		t.Fatalf("cancelled turn meta = %s", m)
	}
	if err := (&Turn{}).SetStructured(json.RawMessage(`{}`)); err == nil {
		t.Fatal("SetStructured without a schema succeeded")
	}
}

// FuzzOutputSchemaOf: any _meta either yields no schema, a schema that
// structured.AssertSupported accepts, or an invalid-params error.
func FuzzOutputSchemaOf(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"dshd":1}`, `{"dshd":{"outputSchema":{"type":"object"}}}`,
		`{"dshd":{"outputSchema":{"type":"object","properties":{"a":{"enum":[1,"x",null]}}}}}`,
		`{"dshd":{"outputSchema":{"$ref":"#"}}}`, `[1]`, `{"dshd":{"outputSchema":"x"}}`} {
		f.Add(s)
	}
	a := New(Options{StructuredTurns: true, Logger: quietLogger()})
	f.Fuzz(func(t *testing.T, meta string) {
		got, err := a.outputSchemaOf(acp.Meta(meta))
		if err != nil {
			if !errors.Is(err, acp.ErrInvalidParams) {
				t.Fatalf("error %v is not invalid params", err)
			}
			return
		}
		if got != nil {
			if aerr := structured.AssertSupported(got); aerr != nil {
				t.Fatalf("accepted an unsupported schema %s: %v", got, aerr)
			}
		}
	})
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
