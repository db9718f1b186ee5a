#!/usr/bin/env bash
# make fuzz: runs every fuzz target of the module (each func Fuzz... of a _test.go file under cmd,
# pkg and test) for FUZZTIME each (10s unless set), one after another. go test keeps an input that
# fails in the package's testdata/fuzz, where it becomes a seed that every plain go test runs:
# commit it with the fix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-10s}
grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' cmd pkg test | sort | while IFS=: read -r file fn; do
	name=${fn#func }
	pkg=./$(dirname "$file")
	echo "fuzzing $name ($pkg) for $fuzztime"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -parallel "${FUZZ_PARALLEL:-2}"
done
