package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/test/chartrender"
)

// chartAccessControlKinds are the objects of the chart the local cluster installs as `helm install` would:
// the controller's identity, everything it is allowed to do, and the admission policies that
// narrow what RBAC cannot. The Deployment, the webhook's
// Service and registration, and the token's Secret are the local cluster's own (webhook.go and
// the token file), since nothing here runs pods.
var chartAccessControlKinds = map[string]bool{
	"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// chartValues are the Helm values this cluster's settings correspond to.
func (c *Cluster) chartValues() map[string]any {
	settings := map[string]any{
		"clusterName": c.opts.ClusterName,
		"mode":        c.opts.Mode,
		"apiURL":      c.linodeURL(),
		"apiVersion":  c.apiVersion(),
	}
	values := map[string]any{
		"apiToken": c.Emulator.Token(),
		"settings": settings,
		"webhook":  map[string]any{"port": c.webhookPort()},
	}
	if c.opts.Mode == ModeInstance {
		values["region"] = c.opts.Region
	}
	return values
}

// installChartRBAC applies the karpenter chart's ServiceAccounts and RBAC, rendered for this
// cluster's mode, and returns the ServiceAccounts by name: the controller's, and in instance mode
// the node identity component's.
func (c *Cluster) installChartRBAC(ctx context.Context) (map[string]*corev1.ServiceAccount, error) {
	objects, err := chartrender.Render("karpenter", c.chartValues())
	if err != nil {
		return nil, fmt.Errorf("rendering the karpenter chart: %w", err)
	}
	serviceAccounts := map[string]*corev1.ServiceAccount{}
	for _, obj := range objects {
		if !chartAccessControlKinds[obj.GetKind()] {
			continue
		}
		if err := c.applyAsHelm(ctx, obj); err != nil {
			return nil, err
		}
		if obj.GetKind() == "ServiceAccount" {
			serviceAccount, err := chartrender.As[corev1.ServiceAccount](obj)
			if err != nil {
				return nil, err
			}
			serviceAccounts[serviceAccount.Name] = serviceAccount
		}
	}
	if serviceAccounts[controllerServiceAccount] == nil {
		return nil, fmt.Errorf("the karpenter chart rendered no ServiceAccount %s", controllerServiceAccount)
	}
	return serviceAccounts, nil
}

// The chart's ServiceAccounts, as the release "karpenter" names them.
const (
	controllerServiceAccount   = "karpenter"
	nodeIdentityServiceAccount = "karpenter-node-identity"
)

// applyAsHelm applies obj as `helm install` does. Right after kube-apiserver starts, the
// namespaces it creates itself (kube-public, kube-node-lease) may not exist yet.
func (c *Cluster) applyAsHelm(ctx context.Context, obj *unstructured.Unstructured) error {
	var err error
	pollErr := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err = c.Kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("helm"), client.ForceOwnership)
		return err == nil, nil
	})
	if pollErr != nil {
		return fmt.Errorf("installing the chart's %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), errors.Join(err, pollErr))
	}
	return nil
}

// controllerTokenLifetime is how long each of the controller's ServiceAccount tokens is valid:
// the kubelet's default for a pod's projected token.
const controllerTokenLifetime = time.Hour

// runAsServiceAccount writes a kubeconfig at kubeconfigPath that authenticates as the
// ServiceAccount with a token from the TokenRequest API, the token a pod of the chart's Deployment
// would mount, so that the apiserver authenticates the process through its ServiceAccount
// authenticator and authorizes it with the chart's RBAC alone. Like the kubelet, it replaces the
// token in its file when 80% of its lifetime has passed; client-go reads a kubeconfig's tokenFile
// again every minute. The refresh runs until Stop. It returns the ServiceAccount's user name.
func (c *Cluster) runAsServiceAccount(ctx context.Context, restConfig *rest.Config, serviceAccount *corev1.ServiceAccount, kubeconfigPath string) (string, error) {
	tokenFile := kubeconfigPath + "-token"
	expiry, err := c.writeServiceAccountToken(ctx, serviceAccount, tokenFile)
	if err != nil {
		return "", err
	}
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["local"] = &clientcmdapi.Cluster{Server: restConfig.Host, CertificateAuthorityData: restConfig.CAData}
	kubeconfig.AuthInfos[serviceAccount.Name] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	kubeconfig.Contexts["controller"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: serviceAccount.Name, Namespace: serviceAccount.Namespace}
	kubeconfig.CurrentContext = "controller"
	if err := clientcmd.WriteToFile(*kubeconfig, kubeconfigPath); err != nil {
		return "", err
	}
	refreshCtx, stopRefresh := context.WithCancel(context.Background())
	c.stopTokenRefresh = append(c.stopTokenRefresh, stopRefresh)
	c.tokenRefreshes.Go(func() {
		delay := time.Until(expiry) / 5 * 4
		for {
			select {
			case <-refreshCtx.Done():
				return
			case <-time.After(delay):
			}
			renewed, err := c.writeServiceAccountToken(refreshCtx, serviceAccount, tokenFile)
			if err != nil {
				// kube-apiserver restarting, say: the token in the file is valid for a fifth of
				// its lifetime yet.
				delay = 10 * time.Second
				continue
			}
			delay = time.Until(renewed) / 5 * 4
		}
	})
	return "system:serviceaccount:" + serviceAccount.Namespace + ":" + serviceAccount.Name, nil
}

// writeServiceAccountToken requests a token for the ServiceAccount and swaps it into the file,
// as the kubelet updates a projected token, and returns when the token expires.
func (c *Cluster) writeServiceAccountToken(ctx context.Context, serviceAccount *corev1.ServiceAccount, path string) (time.Time, error) {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(controllerTokenLifetime.Seconds())),
	}}
	if err := c.Kube.SubResource("token").Create(ctx, serviceAccount.DeepCopy(), request); err != nil {
		return time.Time{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", serviceAccount.Namespace, serviceAccount.Name, err)
	}
	next := path + ".next"
	if err := os.WriteFile(next, []byte(request.Status.Token), 0o600); err != nil {
		return time.Time{}, err
	}
	return request.Status.ExpirationTimestamp.Time, os.Rename(next, path)
}
