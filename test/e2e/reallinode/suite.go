package reallinode

import (
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/linode/karpenter-provider-linode/test/e2e/lifecycle"
)

// cleanupTimeout bounds the run's clean-up: a few Linode API calls, and the statement.
const cleanupTimeout = 5 * time.Minute

// RegisterSpecs registers, at the top of a Ginkgo suite, the lifecycle specs on each of the run's
// tiers, and the run's clean-up around them (RegisterCleanup).
func (r *Run) RegisterSpecs() {
	r.RegisterCleanup()
	var tiers []lifecycle.Tier
	for _, tier := range r.Config.Tiers {
		tiers = append(tiers, lifecycle.Tier{Name: tier, SetUp: func(ctx context.Context) *lifecycle.Environment {
			env, cleanUp, err := r.Tier(ctx, tier)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			ginkgo.DeferCleanup(cleanUp)
			return env
		}})
	}
	lifecycle.Describe(tiers...)
}

// RegisterCleanup has the suite run the run's Cleanup after everything else, at the end and also
// when the suite is interrupted: Ginkgo runs its clean-ups on SIGINT and SIGTERM, within its grace
// period (-ginkgo.grace-period).
func (r *Run) RegisterCleanup() {
	ginkgo.BeforeSuite(func() {
		// Registered before any tier's set-up, so that it runs after all of their clean-ups.
		ginkgo.DeferCleanup(func(ctx context.Context) {
			gomega.Expect(r.Cleanup(ctx)).To(gomega.Succeed())
		}, ginkgo.NodeTimeout(cleanupTimeout))
	})
}
