package sizing

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

const subsystem = "linode_sizing"

var (
	nodePoolLabel = opmetrics.Label{Name: "nodepool", Help: "The NodePool the plans are offered for."}

	priceCeiling = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "price_ceiling",
		Help:      "Hourly price in USD of the dearest plan offered to the NodePool while its pending pods are sized; absent while every plan is offered.",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
	deferredPods = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "deferred_pods",
		Help:      "Pending pods of the NodePool left for a later provisioning round because no plan under the price ceiling holds them.",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
	expectedFleetPrice = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "expected_fleet_price",
		Help:      "Hourly price in USD of the new nodes the sizing policy expects Karpenter to launch for the NodePool's pending pods, in this provisioning round and the later ones for deferred pods.",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
	cheapestFleetPrice = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "cheapest_fleet_price",
		Help:      "Hourly price in USD of the cheapest fleet the sizing policy found for the NodePool's pending pods; the expected fleet costs more when fewer, larger nodes were worth the difference.",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
	timeBudgetExceeded = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "time_budget_exceeded_total",
		Help:      "Decisions for the NodePool's pending pods that took longer than SIZING_TIME_BUDGET, after which the NodePool was offered every plan, as Karpenter core does on its own.",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
	heldOffDecisions = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "held_off_total",
		Help:      "Answers for the NodePool's changed pending pods that offered every plan without sizing, because sizing for at most twice as many shapes took longer than SIZING_TIME_BUDGET shortly before (a minute, doubling with each overrun in a row up to 16).",
	}, []opmetrics.Label{nodePoolLabel}, opmetrics.Beta)
)
