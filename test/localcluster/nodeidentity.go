package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// bootstrapTokenKeySecret is the Secret the node identity component keeps the key in, as the
// release "karpenter" names it.
const bootstrapTokenKeySecret = "karpenter-bootstrap-token-key"

// startNodeIdentity runs instance mode's node identity component as the chart's Deployment runs
// it, as its own ServiceAccount, one replica without leader election, from the binary
// BuildController puts beside the controller's (built here when it is not there). Once it is
// ready, the key it keeps is written where the controller reads it, as the kubelet mounts it into
// the controller's pods.
func (c *Cluster) startNodeIdentity(ctx context.Context, restConfig *rest.Config, serviceAccount *corev1.ServiceAccount, controllerBinary string) error {
	if serviceAccount == nil {
		return errors.New("the karpenter chart rendered no ServiceAccount " + nodeIdentityServiceAccount)
	}
	binary := filepath.Join(filepath.Dir(controllerBinary), "node-identity")
	if _, err := os.Stat(binary); errors.Is(err, os.ErrNotExist) {
		binary = filepath.Join(c.LogDir, "node-identity")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "github.com/linode/karpenter-provider-linode/cmd/node-identity")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the node identity component: %w\n%s", err, out)
		}
	}
	kubeconfig := filepath.Join(c.LogDir, "node-identity-kubeconfig")
	user, err := c.runAsServiceAccount(ctx, restConfig, serviceAccount, kubeconfig)
	if err != nil {
		return err
	}
	c.serviceAccountUsers = append(c.serviceAccountUsers, user)
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	process, err := component.Start(component.Spec{Name: "node-identity", Path: binary, Env: []string{
		"KUBECONFIG=" + kubeconfig,
		"SYSTEM_NAMESPACE=" + webhookNamespace,
		"BOOTSTRAP_TOKEN_KEY_SECRET=" + bootstrapTokenKeySecret,
		"DISABLE_LEADER_ELECTION=true",
		"METRICS_PORT=" + strconv.Itoa(ports[0]),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(ports[1]),
		"LOG_LEVEL=info",
	}}, c.LogDir)
	if err != nil {
		return err
	}
	c.components = append(c.components, process)
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if err := process.CheckRunning(); err != nil {
			return false, err
		}
		resp, err := http.Get(readyz)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("the node identity component was not ready within 2 minutes (%w); the end of its log:\n%s", err, component.Tail(process.LogPath(), 3000))
	}
	key := &corev1.Secret{}
	if err := c.Kube.Get(ctx, client.ObjectKey{Namespace: webhookNamespace, Name: bootstrapTokenKeySecret}, key); err != nil {
		if apierrors.IsNotFound(err) {
			return errors.New("the node identity component is ready but made no bootstrap token key")
		}
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.bootstrapTokenKeyFile()), 0o700); err != nil {
		return err
	}
	return os.WriteFile(c.bootstrapTokenKeyFile(), key.Data[bootstraptoken.KeySecretKey], 0o600)
}

// bootstrapTokenKeyFile is the controller's BOOTSTRAP_TOKEN_KEY_FILE, which the chart mounts from
// the key's Secret.
func (c *Cluster) bootstrapTokenKeyFile() string {
	return filepath.Join(c.LogDir, "bootstrap-token-key", bootstraptoken.KeySecretKey)
}
