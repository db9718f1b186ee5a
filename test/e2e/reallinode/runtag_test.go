package reallinode

import (
	"strings"
	"testing"
	"time"
)

func TestRunTagsAreUniqueValidLinodeTagsAndOnlyOldRunsAreKilledRuns(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	tag := NewRunTag(now)
	if len(tag) < 3 || len(tag) > 50 || !strings.HasPrefix(tag, runTagPrefix) {
		t.Fatalf("run tag %q: a Linode tag is 3 to 50 characters", tag)
	}
	if other := NewRunTag(now); other == tag {
		t.Errorf("two runs started in the same second share tag %q", tag)
	}
	killed := KilledRuns(now)
	oldRun := NewRunTag(now.Add(-MaxRunDuration - time.Minute))
	for _, c := range []struct {
		tags []string
		want bool
	}{
		{[]string{oldRun}, true},
		{[]string{"team-a", oldRun}, true},
		{[]string{tag}, false},
		{[]string{NewRunTag(now.Add(-MaxRunDuration + time.Minute))}, false},
		{[]string{"karpenter-e2e-run-soon", "karpenter-e2e-run-x-y", "production"}, false},
		{nil, false},
	} {
		if got := killed(c.tags); got != c.want {
			t.Errorf("KilledRuns(%v) = %v, want %v", c.tags, got, c.want)
		}
	}
	if !ThisRun(tag)([]string{"a", tag}) || ThisRun(tag)([]string{oldRun}) {
		t.Errorf("ThisRun(%q) matches what carries the tag, and only that", tag)
	}
}
