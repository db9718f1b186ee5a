package component

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awslabs/operatorpkg/object"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"

	"github.com/linode/karpenter-provider-linode/pkg/apis/crds"
)

// The scheduler's and controller manager's client rates, as clusters of thousands of pods set
// them: at their defaults (50 and 20 requests a second) binding or creating 5,000 pods takes
// minutes, and a benchmark would time kube-controller-manager rather than the provider.
const (
	clientQPS   = "--kube-api-qps=200"
	clientBurst = "--kube-api-burst=400"
)

// KubeScheduler binds pods to nodes.
func KubeScheduler(binDir, kubeconfig string) Spec {
	return Spec{Name: "kube-scheduler", Path: filepath.Join(binDir, "kube-scheduler"),
		Args: []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0", clientQPS, clientBurst}}
}

// KubeControllerManager runs the workload controllers, so Deployments become ReplicaSets,
// StatefulSets get their pods, and pods and owned objects are garbage-collected; the node lifecycle controller, which lifts the
// not-ready taint the apiserver puts on every new Node once the Node is Ready; the disruption
// controller, which keeps PodDisruptionBudgets' status, without which every PDB blocks eviction;
// and the pod garbage collector, which deletes the pods of a Node that is gone.
func KubeControllerManager(binDir, kubeconfig string, opts ...ControllerManagerOption) Spec {
	controllers := []string{"deployment-controller", "replicaset-controller", "statefulset-controller", "garbage-collector-controller",
		"daemonset-controller", "job-controller", "node-lifecycle-controller", "disruption-controller", "pod-garbage-collector-controller"}
	args := []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=false", clientQPS, clientBurst}
	for _, opt := range opts {
		opt(&controllers, &args)
	}
	return Spec{Name: "kube-controller-manager", Path: filepath.Join(binDir, "kube-controller-manager"),
		Args: append(args, "--controllers="+controllerList(controllers))}
}

// KwokNodes says which nodes kwok acts as the kubelet of: those matching a label selector or an
// annotation selector (kubectl syntax, e.g. "lke.linode.com/pool-id" or "kwok.x-k8s.io/node=fake").
type KwokNodes struct {
	LabelSelector      string
	AnnotationSelector string
	// DownAnnotationSelector selects the nodes whose kubelet is down: kwok leaves their status
	// alone, so a node marked not Ready stays so.
	DownAnnotationSelector string
}

// Kwok keeps the selected nodes Ready (heartbeats and leases) and runs and deletes their pods.
func Kwok(binDir, kubeconfig string, nodes KwokNodes) Spec {
	args := []string{"--kubeconfig=" + kubeconfig, "--manage-all-nodes=false", "--node-lease-duration-seconds=40"}
	if nodes.LabelSelector != "" {
		args = append(args, "--manage-nodes-with-label-selector="+nodes.LabelSelector)
	}
	if nodes.AnnotationSelector != "" {
		args = append(args, "--manage-nodes-with-annotation-selector="+nodes.AnnotationSelector)
	}
	if nodes.DownAnnotationSelector != "" {
		args = append(args, "--disregard-status-with-annotation-selector="+nodes.DownAnnotationSelector)
	}
	// The bare kwok binary has no behaviour of its own: build-k8s-binaries.sh copies its stage
	// manifests next to it.
	for _, stage := range []string{"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete", "pod-delete"} {
		args = append(args, "--config="+filepath.Join(binDir, "kwok-stages", stage+".yaml"))
	}
	return Spec{Name: "kwok", Path: filepath.Join(binDir, "kwok"), Args: args}
}

// WriteAdminKubeconfig writes a kubeconfig for a system:masters user of the control plane to path,
// for the components, for kubectl and for the person at the keyboard.
func WriteAdminKubeconfig(controlPlane *envtest.ControlPlane, path string) error {
	admin, err := controlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating an admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, kubeconfig, 0o600)
}

// CRDs are every CustomResourceDefinition the provider needs: Karpenter core's and ours.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	return append(coreapis.CRDs[:len(coreapis.CRDs):len(coreapis.CRDs)],
		object.Unmarshal[apiextensionsv1.CustomResourceDefinition](crds.LinodeNodeClass))
}
