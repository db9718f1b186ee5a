// Package component runs the processes of a local Kubernetes cluster: kube-scheduler,
// kube-controller-manager and kwok from hack/build-k8s-binaries.sh, and the provider's controller.
// Each runs in a process group of its own with its output kept in a log file, so that stopping the
// cluster stops everything it started and a failure can show what the component said.
package component
