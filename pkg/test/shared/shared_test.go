package shared

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a T that notes whether the test was skipped or failed, and why.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = fmt.Sprintf(format, a...) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }

func TestAMissingDirectorySkipsOutsideCIAndFailsInIt(t *testing.T) {
	const missing = "no-such-reference-data"
	t.Setenv("CI", "")
	var outside recorder
	Require(&outside, missing)
	if outside.skipped == "" || outside.failed != "" || !strings.Contains(outside.skipped, "../shared/"+missing) || !strings.Contains(outside.skipped, "CONTRIBUTING.md") {
		t.Errorf("outside CI: skipped %q, failed %q; want a skip naming the directory and CONTRIBUTING.md", outside.skipped, outside.failed)
	}
	t.Setenv("CI", "true")
	var inCI recorder
	Require(&inCI, missing)
	if inCI.failed == "" || inCI.skipped != "" {
		t.Errorf("under CI=true: skipped %q, failed %q; want a failure", inCI.skipped, inCI.failed)
	}
}
