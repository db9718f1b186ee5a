package maintenance

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

const subsystem = "linode_maintenance"

var (
	causeLabel = opmetrics.Label{
		Name: "cause",
		Help: "What Linode reported: a maintenance type (power_off_on, reboot, cold_migration, live_migration, migrate) or an event action (host_reboot, lassie_reboot, linode_shutdown).",
	}
	decisionLabel = opmetrics.Label{
		Name: "decision",
		Help: "What the controller did about it.",
		Values: []opmetrics.Value{
			{Name: string(ReplaceBeforeWindow), Help: "Marked the NodeClaim drifted: core launches a replacement, then drains the node under the NodePool's disruption budgets and PodDisruptionBudgets."},
			{Name: string(Wait), Help: "Maintenance that takes the node down starts later than the lead time; the node is replaced once it is within it."},
			{Name: string(NoAction), Help: "Maintenance that keeps the node running (a live migration): recorded, nothing changes."},
			{Name: string(Withdrawn), Help: "Maintenance the node was to be replaced for is no longer scheduled; the NodeClaim is no longer drifted for it."},
			{Name: string(ReplaceNow), Help: "The node's Linode is down (host failure, unexpected power-off, maintenance under way): the NodeClaim is deleted at once, without waiting for its pods to drain."},
			{Name: string(ReplaceDraining), Help: "The node's Linode went down unexpectedly and is running again: the NodeClaim is deleted and the node drained under PodDisruptionBudgets."},
		},
	}

	// Decisions counts the controller's decisions about nodes of this cluster.
	Decisions = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "decisions_total",
		Help:      "Decisions about nodes whose Linode has host maintenance scheduled or went down unexpectedly, by what Linode reported, the decision and the NodePool.",
	}, []opmetrics.Label{causeLabel, decisionLabel, {Name: metrics.NodePoolLabel, Help: "The NodePool of the node."}}, opmetrics.Beta)

	// LastPoll is when Linode's maintenance and events were last read in full.
	LastPoll = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "last_poll_timestamp_seconds",
		Help:      "Unix time of the last poll that read both Linode's maintenance list and its events.",
	}, nil, opmetrics.Beta)
)
