package reallinode

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runTagPrefix starts every run's tag; what follows is when the run started (Unix seconds) and a
// random suffix, so that two runs in one account never share a tag.
const runTagPrefix = "karpenter-e2e-run-"

// MaxRunDuration is longer than any run may last: `make e2e-linode` gives go test a shorter
// timeout. A run's tag older than this is a killed run's, whose leftovers Sweep deletes; a
// younger one may be another run's, going on in the same account, and is left alone.
const MaxRunDuration = 3 * time.Hour

// NewRunTag is a tag for a run started at now.
func NewRunTag(now time.Time) string {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	return runTagPrefix + strconv.FormatInt(now.Unix(), 10) + "-" + hex.EncodeToString(suffix)
}

// runStarted is when the run whose tag this is started; false for a tag that is no run's.
func runStarted(tag string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(tag, runTagPrefix)
	if !ok {
		return time.Time{}, false
	}
	seconds, _, ok := strings.Cut(rest, "-")
	if !ok {
		return time.Time{}, false
	}
	unix, err := strconv.ParseInt(seconds, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(unix, 0), true
}

// ThisRun matches what carries the run's tag.
func ThisRun(runTag string) func(tags []string) bool {
	return func(tags []string) bool { return slices.Contains(tags, runTag) }
}

// KilledRuns matches what carries the tag of a run that started more than MaxRunDuration before
// now: a run killed before it could delete what it made.
func KilledRuns(now time.Time) func(tags []string) bool {
	return func(tags []string) bool {
		return slices.ContainsFunc(tags, func(tag string) bool {
			started, ok := runStarted(tag)
			return ok && now.Sub(started) > MaxRunDuration
		})
	}
}
