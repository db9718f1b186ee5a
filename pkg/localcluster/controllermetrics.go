package localcluster

import "fmt"

// ControllerMetricsURL is the controller's Prometheus endpoint (its METRICS_PORT), where a
// benchmark reads its heap and CPU time.
func (c *Cluster) ControllerMetricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", c.controllerPorts[0])
}
