package reallinode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	// Karpenter's and the provider's types register themselves in client-go's scheme.
	_ "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	_ "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// KubeClient is a client of the cluster the kubeconfig names, with Karpenter's, the provider's
// and the CRDs' types.
func KubeClient(kubeconfig []byte) (client.Client, error) {
	restConfig, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the LKE cluster's kubeconfig: %w", err)
	}
	if err := apiextensionsv1.AddToScheme(clientgoscheme.Scheme); err != nil {
		return nil, err
	}
	return client.New(restConfig, client.Options{Scheme: clientgoscheme.Scheme})
}

// InstallCRDs creates Karpenter's and the provider's CRDs in the cluster, or updates them to
// this tree's. They are installed without the LinodeNodeClass conversion webhook, which nothing
// in the cluster could reach: the specs use v1 only, which needs no conversion.
func InstallCRDs(ctx context.Context, kube client.Client) error {
	for _, crd := range component.CRDs() {
		crd.Spec.Conversion = nil
		current := &apiextensionsv1.CustomResourceDefinition{}
		err := kube.Get(ctx, client.ObjectKeyFromObject(crd), current)
		switch {
		case err == nil:
			crd.ResourceVersion = current.ResourceVersion
			err = kube.Update(ctx, crd)
		case client.IgnoreNotFound(err) == nil:
			err = kube.Create(ctx, crd)
		}
		if err != nil {
			return fmt.Errorf("installing CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// Controller is the provider's controller, run on this machine for one tier's cluster.
type Controller struct {
	process *component.Process
}

// StartController runs the controller binary for the LKE cluster labelled clusterLabel, with
// its kubeconfig and the token in files of dir, and waits until it is ready. It runs as the
// kubeconfig's user (LKE's admin), not as the chart's ServiceAccount, and without the Node
// webhook, which the cluster's kube-apiserver could not reach here.
func StartController(ctx context.Context, binary, dir string, cfg Config, clusterLabel, tier string, kubeconfig []byte) (*Controller, error) {
	kubeconfigPath := filepath.Join(dir, tier+".kubeconfig")
	tokenPath := filepath.Join(dir, "linode-token")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(tokenPath, []byte(cfg.Token), 0o600); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	process, err := component.Start(component.Spec{Name: "controller-" + tier, Path: binary, Env: []string{
		"KUBECONFIG=" + kubeconfigPath,
		"CLUSTER_NAME=" + clusterLabel,
		"KARPENTER_MODE=lke",
		"LINODE_TOKEN_FILE=" + tokenPath,
		"LINODE_URL=" + cfg.URL,
		"LINODE_API_VERSION=" + APIVersion(tier),
		"METRICS_PORT=" + strconv.Itoa(ports[0]),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(ports[1]),
		"WEBHOOK_PORT=" + strconv.Itoa(ports[2]),
		"DISABLE_WEBHOOK=true",
		"DISABLE_LEADER_ELECTION=true",
		"LOG_LEVEL=info",
	}}, dir)
	if err != nil {
		return nil, err
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if err := process.CheckRunning(); err != nil {
			return nil, err
		}
		if resp, err := http.Get(readyz); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &Controller{process: process}, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("the controller for the %s tier was not ready within 5 minutes; the end of its log:\n%s", tier, component.Tail(process.LogPath(), 3000)), process.Stop(10*time.Second))
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), process.Stop(10*time.Second))
		case <-time.After(time.Second):
		}
	}
}

// Stop stops the controller, letting it finish what it is doing for a few seconds.
func (c *Controller) Stop() error { return c.process.Stop(10 * time.Second) }

// freePorts are n ports free now.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
