package procgroup

import (
	"slices"
	"syscall"
	"testing"
)

func TestWindowsCreationFlags(t *testing.T) {
	for _, tc := range []struct {
		name           string
		existing, want uint32
	}{
		{"none", 0, createSuspended | createNewProcessGroup},
		{"kept", 0x08000000 /* CREATE_NO_WINDOW */, 0x08000000 | createSuspended | createNewProcessGroup},
		{"breakaway dropped", createBreakawayFromJob | createSuspended, createSuspended | createNewProcessGroup},
	} {
		if got := windowsCreationFlags(tc.existing); got != tc.want {
			t.Errorf("%s: windowsCreationFlags(%#x) = %#x, want %#x", tc.name, tc.existing, got, tc.want)
		}
	}
}

func TestJobLimitFlags(t *testing.T) {
	f := jobLimitFlags()
	if f&jobLimitKillOnJobClose == 0 {
		t.Errorf("job limits %#x: no kill-on-close, so a killed daemon would leave the tree running", f)
	}
	if f&(jobLimitBreakawayOK|jobLimitSilentBreakawayOK) != 0 {
		t.Errorf("job limits %#x let descendants break away from the job", f)
	}
}

func TestThreadsOf(t *testing.T) {
	snap := []thread{{1, 10}, {2, 42}, {3, 10}, {4, 42}, {5, 7}}
	if got := threadsOf(snap, 42); !slices.Equal(got, []uint32{2, 4}) {
		t.Errorf("threadsOf(42) = %v, want [2 4]", got)
	}
	if got := threadsOf(snap, 99); got != nil {
		t.Errorf("threadsOf(99) = %v, want none", got)
	}
}

func TestTerminates(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
		if !terminates(sig) {
			t.Errorf("%v does not end the job", sig)
		}
	}
	if terminates(0) {
		t.Error("signal 0 ends the job; it only probes")
	}
}
