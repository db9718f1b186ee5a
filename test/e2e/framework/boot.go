package framework

import (
	"os"
	"time"

	"github.com/onsi/gomega"
)

// DuplicatesBoot is how long the duplicates specs' Linodes take from create to running. In
// `make test` it is 60 s: three times core's nomination window with default batching (20 s), so
// every pending pod outlives its nomination and is scheduled again against NodeClaims that have
// launched but not registered, as with Linode's real 3-minute boot, only fewer times.
// E2E_DUPLICATES_BOOT=3m runs Linode's figure.
func DuplicatesBoot() time.Duration {
	if value, ok := os.LookupEnv("E2E_DUPLICATES_BOOT"); ok {
		boot, err := time.ParseDuration(value)
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "E2E_DUPLICATES_BOOT")
		return boot
	}
	return time.Minute
}
