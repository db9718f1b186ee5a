package test

import (
	"fmt"

	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// NodePoolMetric is the value of the named gauge or counter for the NodePool (its "nodepool"
// label) in this process's registry, where the provider's controllers register their metrics,
// and whether the NodePool has one.
func NodePoolMetric(name, nodePool string) (float64, bool, error) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0, false, fmt.Errorf("reading the controller's metrics: %w", err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, metric := range family.GetMetric() {
			for _, label := range metric.GetLabel() {
				if label.GetName() == "nodepool" && label.GetValue() == nodePool {
					if family.GetType() == dto.MetricType_COUNTER {
						return metric.GetCounter().GetValue(), true, nil
					}
					return metric.GetGauge().GetValue(), true, nil
				}
			}
		}
	}
	return 0, false, nil
}
