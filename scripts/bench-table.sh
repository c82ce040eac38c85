#!/usr/bin/env bash
# bench-table.sh reruns every benchmark of the module once and writes one
# markdown table to bench/results.md: each benchmark with ns/op, B/op,
# allocs/op, its custom metrics, and the ratio to its same-run reference
# where one exists (see REFERENCES below). The raw output is kept in
# bench/raw.txt.
#
# Environment: BENCHTIME (default 1s) is passed to -benchtime; PKGS
# (default ./...) limits the packages; GO (default go) is the go command.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BENCHTIME=${BENCHTIME:-1s}
PKGS=${PKGS:-./...}
mkdir -p bench
raw=bench/raw.txt
out=bench/results.md

# Same-run references, one per line: "<package> <benchmark> <package>
# <reference> [metric]". A benchmark ending in "/" is a prefix: every
# sub-benchmark under it compares with the reference (itself a prefix when
# it ends in "/", the rest of the name carried over). The metric defaults
# to ns/op. A benchmark may have several lines: each ratio is shown. Two
# rules apply to a benchmark without a line: a sub-benchmark named "dshd"
# compares with its first sibling, and BenchmarkX compares with
# BenchmarkXBaseline, BenchmarkXReference or BenchmarkXFlat of the same
# package.
REFERENCES='
e2e BenchmarkStartup/dshd e2e BenchmarkStartup/echo-jsonschema p50-ns
e2e BenchmarkStartup/dshd e2e BenchmarkStartup/echo-deps p50-ns
e2e BenchmarkStartup/echo-deps e2e BenchmarkStartup/echo-jsonschema p50-ns
model/openai BenchmarkHandleChunk model/openai BenchmarkUnmarshalChunkBaseline
model/internal/sse BenchmarkReader model/internal/sse BenchmarkScannerBaseline
model BenchmarkRebuild model BenchmarkRebuildJSONReference
registry BenchmarkDecodeArgs registry BenchmarkBareUnmarshal
registry BenchmarkDecodeArgsWithoutChecker registry BenchmarkBareUnmarshal
pipeline BenchmarkExecute/ pipeline BenchmarkBareJSON
pipeline BenchmarkExecuteListeners/ pipeline BenchmarkBareJSON
pipeline BenchmarkExecuteParallel/procs=1 pipeline BenchmarkBareJSON
pipeline BenchmarkExecuteParallel/procs=2 pipeline BenchmarkExecuteParallel/procs=1
presentation BenchmarkHunks/100k_lines_500_edits presentation BenchmarkHunks/10k_lines_50_edits cpu-ns/op
presentation BenchmarkHunks/100k_lines_50_edits presentation BenchmarkHunks/10k_lines_50_edits cpu-ns/op
presentation BenchmarkHunks/ presentation BenchmarkGNUDiff/
bridge/sessionlog BenchmarkRead10k bridge/sessionlog BenchmarkReadReference10k
bridge/sessionlog BenchmarkAppend bridge/sessionlog BenchmarkMarshalReference
e2e BenchmarkTurn1000Calls/allowed bridge BenchmarkTurn1000Calls
e2e BenchmarkTurn1000Calls/asked bridge BenchmarkTurn1000CallsAsked
e2e BenchmarkStartup/echo-jsonschema e2e BenchmarkStartup/echo p50-ns
sandbox BenchmarkStart/ sandbox BenchmarkStart/direct
e2e BenchmarkMemory/idle e2e BenchmarkMemory/echo-idle peak-RSS-MB
e2e BenchmarkMemory/turn1000 e2e BenchmarkMemory/echo-idle peak-RSS-MB
e2e BenchmarkMemory/sessions50 e2e BenchmarkMemory/echo-idle peak-RSS-MB
'

echo "running: $GO test -run '^\$' -bench . -benchmem -count 1 -benchtime $BENCHTIME $PKGS" >&2
$GO test -run '^$' -bench . -benchmem -count 1 -benchtime "$BENCHTIME" $PKGS 2>&1 | tee "$raw" >&2
status=${PIPESTATUS[0]}

module=$($GO list -m)
# The sections written by hand below the table (each a "## " heading: runs
# on their own, before/after comparisons) are kept as they are.
kept=$(awk 'f || /^## /{f=1; print}' "$out" 2>/dev/null)
{
	echo "# Benchmark results"
	echo
	echo "Written by \`scripts/bench-table.sh\` (make bench-table): every benchmark of the module, one run"
	echo "(\`-count 1 -benchtime $BENCHTIME\`), at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "on $(date -u +%Y-%m-%d), $($GO version | cut -d' ' -f3-), $(grep -m1 '^cpu:' "$raw" | cut -d' ' -f2- | sed 's/ *$//'), $(nproc) CPUs."
	echo "The ratio is this benchmark over its reference measured in the same run (ns/op unless named)."
	if [ "$status" -ne 0 ]; then
		echo
		echo "**go test exited with status $status: some packages failed; see bench/raw.txt.**"
	fi
	echo
	awk -v module="$module" -v refs="$REFERENCES" -f <(cat <<'AWK'
function short(p) { if (p == module) return "."; sub("^" module "/", "", p); return p }
function fmt(v) {
	if (v == "") return ""
	if (v >= 100 || v == int(v)) return sprintf("%.0f", v)
	if (v >= 1) return sprintf("%.2f", v)
	return sprintf("%.3g", v)
}
BEGIN {
	nrefs = split(refs, lines, "\n")
	for (i = 1; i <= nrefs; i++) {
		if (split(lines[i], f, " ") < 4) continue
		n++
		rb[n] = f[1] " " f[2]; rr[n] = f[3] " " f[4]; rm[n] = (f[5] == "" ? "ns/op" : f[5])
	}
}
/^pkg: / { pkg = short($2); next }
/^Benchmark/ && $3 ~ /^[0-9.]+$/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	key = pkg " " name
	order[++count] = key
	pkgOf[key] = pkg; nameOf[key] = name
	extra = ""
	for (i = 3; i + 1 <= NF; i += 2) {
		unit = $(i + 1); val[key, unit] = $i
		if (unit != "ns/op" && unit != "B/op" && unit != "allocs/op")
			extra = extra (extra == "" ? "" : ", ") fmt($i) " " unit
	}
	extras[key] = extra
}
# references(key) puts key's same-run references in refKey[1..] and
# refUnit[1..] and returns how many: every line of REFERENCES that names
# key, else the rules without a line.
function references(key,    i, m, name, parent, j, k, suffixes, s) {
	m = 0
	for (i = 1; i <= n; i++) {
		if (rb[i] ~ /\/$/ && index(key, rb[i]) == 1) {
			refKey[++m] = (rr[i] ~ /\/$/) ? rr[i] substr(key, length(rb[i]) + 1) : rr[i]
			refUnit[m] = rm[i]
		} else if (rb[i] == key) {
			refKey[++m] = rr[i]; refUnit[m] = rm[i]
		}
	}
	if (m > 0) return m
	name = nameOf[key]
	if (name ~ /\/dshd$/) {
		parent = substr(name, 1, length(name) - 4)
		for (j = 1; j <= count; j++) {
			k = order[j]
			if (pkgOf[k] == pkgOf[key] && k != key && index(nameOf[k], parent) == 1 && substr(nameOf[k], length(parent) + 1) !~ /\//) {
				refKey[1] = k; refUnit[1] = "ns/op"; return 1
			}
		}
	}
	split("Baseline Reference Flat", suffixes, " ")
	for (s = 1; s <= 3; s++) {
		if ((pkgOf[key] " " name suffixes[s]) in pkgOf) {
			refKey[1] = pkgOf[key] " " name suffixes[s]; refUnit[1] = "ns/op"; return 1
		}
	}
	return 0
}
END {
	print "| package | benchmark | ns/op | B/op | allocs/op | other metrics | ratio (same run) |"
	print "|---|---|---:|---:|---:|---|---|"
	for (j = 1; j <= count; j++) {
		key = order[j]
		ratio = ""
		m = references(key)
		for (r = 1; r <= m; r++) {
			ref = refKey[r]; unit = refUnit[r]
			if (!((ref, unit) in val && (key, unit) in val && val[ref, unit] + 0 > 0)) continue
			split(ref, rp, " ")
			label = (rp[1] == pkgOf[key]) ? rp[2] : rp[1] "." rp[2]
			ratio = ratio (ratio == "" ? "" : "; ") sprintf("%.2fx %s (%s)", val[key, unit] / val[ref, unit], label, unit)
		}
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", pkgOf[key], nameOf[key], fmt(val[key, "ns/op"]), fmt(val[key, "B/op"]), fmt(val[key, "allocs/op"]), extras[key], ratio
	}
}
AWK
) "$raw"
	if [ -n "$kept" ]; then
		echo
		printf '%s\n' "$kept"
	fi
} >"$out"
echo "wrote $out" >&2
exit "$status"
