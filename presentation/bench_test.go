package presentation

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The targets: 10,000 lines with 50 scattered edits cost at most 2x
// GNU diff -U3 on the same files (BenchmarkGNUDiff), and 100,000 lines cost
// at most 12x the 10,000-line case. The issue does not say how many edits
// the larger file has: with proportional (500) edits the work per line is
// the same, the stricter reading; with the same 50 edits it is the same
// change in a larger file. Both are measured.

func BenchmarkHunks(b *testing.B) {
	for _, size := range []struct {
		name         string
		lines, edits int
	}{
		{"10k_lines_50_edits", 10_000, 50},
		{"100k_lines_500_edits", 100_000, 500},
		{"100k_lines_50_edits", 100_000, 50},
	} {
		before, after := editLines(size.lines, size.edits, 1)
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(before) + len(after)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				res := Hunks("f", &before, &after)
				if res.Fallback != "" || len(res.Diffs) == 0 {
					b.Fatalf("Fallback %q, %d diffs", res.Fallback, len(res.Diffs))
				}
			}
			reportCPU(b, processCPU()-cpu)
		})
	}
}

// The machine that runs these is shared, so wall time (ns/op) swings with
// its load; cpu-ns/op (user+system CPU time of this process, or of the diff
// child) is the steadier figure to take ratios of.

func reportCPU(b *testing.B, cpu time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkGNUDiff is the same-run reference: GNU diff -U3 on the same two
// files, process start included (that is what a tool shelling out pays).
func BenchmarkGNUDiff(b *testing.B) {
	diff, err := exec.LookPath("diff")
	if err != nil {
		b.Skip("GNU diff is not installed: no reference to compare with")
	}
	for _, size := range []struct {
		name         string
		lines, edits int
	}{
		{"10k_lines_50_edits", 10_000, 50},
		{"100k_lines_500_edits", 100_000, 500},
	} {
		before, after := editLines(size.lines, size.edits, 1)
		dir := b.TempDir()
		beforePath, afterPath := filepath.Join(dir, "before"), filepath.Join(dir, "after")
		if err := os.WriteFile(beforePath, []byte(before), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(afterPath, []byte(after), 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(before) + len(after)))
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(diff, "-U3", beforePath, afterPath)
				out, err := cmd.Output()
				// Exit status 1 means "files differ", which is expected.
				if exitErr := (*exec.ExitError)(nil); !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 || len(out) == 0 {
					b.Fatalf("diff: %v (%d bytes of output)", err, len(out))
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			reportCPU(b, cpu)
		})
	}
}
