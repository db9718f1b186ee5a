package instancetype

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

const subsystem = "linode_instance_type"

var (
	instanceTypeLabel = opmetrics.Label{Name: "instance_type", Help: "The Linode plan, e.g. g6-standard-2."}
	regionLabel       = opmetrics.Label{Name: "region", Help: "The Linode region, which is also the offering's zone."}

	offeringPrice = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "offering_price_estimate",
		Help:      "Hourly price in USD of a plan in a region, from the plan's region_prices or its list price.",
	}, []opmetrics.Label{instanceTypeLabel, regionLabel}, opmetrics.Beta)
	offeringAvailable = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "offering_available",
		Help:      "1 when the plan can launch in the region, 0 when the region lacks its capability, Linode lists it as unavailable, or a recent launch failed for lack of capacity.",
	}, []opmetrics.Label{instanceTypeLabel, regionLabel}, opmetrics.Beta)
	catalogueLastRefresh = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: subsystem,
		Name:      "catalogue_last_refresh_timestamp_seconds",
		Help:      "Unix time of the last successful read of the Linode plan catalogue.",
	}, nil, opmetrics.Beta)
)

func offeringLabels(instanceType, region string) map[string]string {
	return map[string]string{instanceTypeLabel.Name: instanceType, regionLabel.Name: region}
}
