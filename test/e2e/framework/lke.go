package framework

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/linode/karpenter-provider-linode/test/localcluster"
)

// DelayScale makes a Linode boot in about 3 s (160 s on Linode): slow enough that launches
// overlap and pods wait, fast enough for a suite to finish in minutes.
const DelayScale = 0.02

// Scaled is a duration on Linode's clock as the emulator plays it: its delays are scaled by
// DelayScale, and so are the maintenance windows and the controller's maintenance settings.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * DelayScale) }

// LKEControllerEnv is the LKE suites' controller settings, then overrides, which win. Batching
// windows shorter than core's defaults (1 s idle, 10 s max) keep each spec short; the maintenance
// settings are scaled like the emulator's delays: the 2-hour lead time by DelayScale, the 1-minute
// poll interval to the shortest allowed, 5 s.
func LKEControllerEnv(overrides ...string) []string {
	return slices.Concat([]string{
		"BATCH_IDLE_DURATION=500ms", "BATCH_MAX_DURATION=3s",
		"MAINTENANCE_LEAD_TIME=" + Scaled(2*time.Hour).String(), "MAINTENANCE_POLL_INTERVAL=5s",
	}, overrides)
}

// LKECluster is the local cluster an LKE-mode suite runs on: an LKE cluster named name in the
// emulator, its delays scaled by DelayScale, and the controller with LKEControllerEnv.
func LKECluster(name string) localcluster.Options {
	return localcluster.Options{
		ClusterName:   name,
		DelayScale:    DelayScale,
		ControllerEnv: LKEControllerEnv(),
		// Linode sells GPU plans in limited numbers; a GPU spec needs a couple.
		PlanCapacity: map[string]int{"g1-gpu-rtx6000-1": 2, "g1-gpu-rtx6000-2": 2},
	}
}

// HasTaint reports whether node carries a taint with the key and effect.
func HasTaint(node corev1.Node, key string, effect corev1.TaintEffect) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
}
