package sandbox_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

func ExamplePolicy_Describe() {
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: false, WritableRoots: []string{"/home/me/project"}}
	fmt.Println(p.Describe())
	fmt.Println(p.Meta())
	// Output:
	// runs sandboxed: writes limited to /home/me/project, the temp directory; no network
	// map[mode:workspace-write network:false writableRoots:[/home/me/project]]
}

func TestDecodePolicyRejectsBadInput(t *testing.T) {
	for _, in := range []string{
		``, `{`, `[]`, `{"mode":""}`, `{"mode":"sideways"}`, `{"mode":"off","extra":1}`,
		`{"mode":"off","writableRoots":["relative"]}`, `{"mode":"off","protected":[""]}`,
		`{"mode":"off","privateTemp":"tmp"}`, `{"mode":"off"} {}`,
	} {
		if _, err := sandbox.DecodePolicy(in); err == nil {
			t.Errorf("DecodePolicy(%q) accepted it", in)
		}
	}
}

// FuzzDecodePolicy: the launcher's --policy decoder never panics, and a
// policy it accepts encodes back to one that decodes to the same policy.
func FuzzDecodePolicy(f *testing.F) {
	f.Add(`{"mode":"workspace-write","network":true,"writableRoots":["/a"],"protected":["/a/.git"]}`)
	f.Add(`{"mode":"read-only","network":false,"privateTemp":"/tmp/x"}`)
	f.Add(`{"mode":"off"}`)
	f.Fuzz(func(t *testing.T, in string) {
		p, err := sandbox.DecodePolicy(in)
		if err != nil {
			return
		}
		back, err := sandbox.DecodePolicy(p.Encode())
		if err != nil {
			t.Fatalf("%q decoded, but its encoding %q does not: %v", in, p.Encode(), err)
		}
		// Compared as encoded: an empty list and none are the same policy.
		if p.Encode() != back.Encode() || !reflect.DeepEqual(p.Meta(), back.Meta()) {
			t.Fatalf("round trip changed %+v into %+v", p, back)
		}
	})
}
