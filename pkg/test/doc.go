// Package test holds the fixtures the provider's tests and benchmarks share: the Linode API
// emulator started with a client aimed at it, the provider in LKE mode built by the operator's
// own constructor over an emulated LKE cluster, LinodeNodeClass and NodePool builders, and the
// settings tests run with. pkg/test/expectations wraps them for Ginkgo suites; the Kubernetes
// control plane is in pkg/test/environment.
package test
