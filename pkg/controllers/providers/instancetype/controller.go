// Package instancetype keeps the instance type provider's Linode plan catalogue fresh: it reads
// it when the controller starts and every refresh interval after that, and, while the API fails,
// keeps the last good catalogue and retries sooner instead of stopping the operator.
package instancetype

import (
	"context"
	"time"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	"github.com/prometheus/client_golang/prometheus"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
)

// Retries after a failed read start at firstRetry and double up to lastRetry (or the refresh
// interval, if shorter): soon enough that a NodePool is not left without plans for long, slow
// enough to stay far below Linode's 200 listings a minute.
const (
	firstRetry = 10 * time.Second
	lastRetry  = 5 * time.Minute
)

var refreshErrors = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
	Namespace: metrics.Namespace,
	Subsystem: "linode_instance_type",
	Name:      "catalogue_refresh_errors_total",
	Help:      "Failed reads of the Linode plan catalogue; the last good catalogue stays in use.",
}, nil, opmetrics.Beta)

// Controller refreshes the plan catalogue.
type Controller struct {
	provider instancetype.Provider
	interval time.Duration
	// failures counts consecutive failed reads; only the singleton's one worker touches it.
	failures int
}

// NewController returns a controller that re-reads the catalogue every interval.
func NewController(provider instancetype.Provider, interval time.Duration) *Controller {
	return &Controller{provider: provider, interval: interval}
}

// Reconcile reads the catalogue and says when to read it next.
func (c *Controller) Reconcile(ctx context.Context) (reconciler.Result, error) {
	if err := c.provider.UpdateCatalogue(ctx); err != nil {
		c.failures++
		retry := c.retryAfter()
		refreshErrors.Inc(nil)
		log.FromContext(ctx).Error(err, "failed to refresh the Linode plan catalogue; keeping the last good one", "retry-after", retry, "consecutive-failures", c.failures)
		// Not returned as an error: the retry schedule is this controller's, not the work queue's.
		return reconciler.Result{RequeueAfter: retry}, nil
	}
	if c.failures > 0 {
		log.FromContext(ctx).Info("refreshed the Linode plan catalogue after failures", "consecutive-failures", c.failures)
	}
	c.failures = 0
	return reconciler.Result{RequeueAfter: c.interval}, nil
}

func (c *Controller) retryAfter() time.Duration {
	retry := firstRetry
	for i := 1; i < c.failures && retry < lastRetry; i++ {
		retry *= 2
	}
	return min(retry, lastRetry, c.interval)
}

// Register runs the controller as a singleton in the manager.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("providers.instancetype.catalogue").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}
