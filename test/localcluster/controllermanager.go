package localcluster

import (
	"fmt"
	"time"

	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// csrSigner is kube-controller-manager's controller that signs approved certificate requests.
const csrSigner = "certificatesigningrequest-signing-controller"

// StopCSRSigning starts kube-controller-manager again without its CSR signer, as a control plane
// whose signer is down: approved node client certificate requests wait unsigned, and nodes that
// join by TLS bootstrap wait with them. The returned function starts it again with the signer.
// kube-controller-manager's other controllers are down only while it restarts, a few seconds.
func (c *Cluster) StopCSRSigning() (restore func() error, err error) {
	if err := c.restartControllerManager(component.WithoutControllers(csrSigner)); err != nil {
		return nil, fmt.Errorf("stopping the CSR signer: %w", err)
	}
	return func() error {
		if err := c.restartControllerManager(); err != nil {
			return fmt.Errorf("starting the CSR signer again: %w", err)
		}
		return nil
	}, nil
}

// restartControllerManager stops kube-controller-manager and starts it with its configuration
// and opts; its log continues in the same file.
func (c *Cluster) restartControllerManager(opts ...component.ControllerManagerOption) error {
	return c.restartComponent("kube-controller-manager", func(binDir string) component.Spec {
		return component.KubeControllerManager(binDir, c.KubeconfigPath, append(append([]component.ControllerManagerOption(nil), c.controllerManager...), opts...)...)
	})
}

// RestartKwok stops kwok and starts it again. kwok takes a Node to act as its kubelet (its
// lease, its pods) only when it first sees it unless its status is to be left alone: Nodes
// registered so (nodesim's HoldNotReady) are taken when kwok starts again and lists them, as
// kubelets that start over.
func (c *Cluster) RestartKwok() error {
	return c.restartComponent("kwok", func(binDir string) component.Spec {
		return component.Kwok(binDir, c.KubeconfigPath, kwokNodes)
	})
}

// restartComponent stops the component named name and starts spec in its place; its log
// continues in the same file.
func (c *Cluster) restartComponent(name string, spec func(binDir string) component.Spec) error {
	binDir, err := component.BinaryDir()
	if err != nil {
		return err
	}
	for i, p := range c.components {
		if p.Name() != name {
			continue
		}
		if err := p.Stop(10 * time.Second); err != nil {
			return err
		}
		if c.components[i], err = component.Start(spec(binDir), c.LogDir); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("no %s runs", name)
}
