package localcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// auditPolicy has kube-apiserver record every request of a ServiceAccount, without bodies: the
// controller's are the only ones here, and each says whether it was refused and why.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`

// configureAudit has kube-apiserver write its audit log into the work directory, in place of
// the log of a cluster that used the directory before.
func (c *Cluster) configureAudit(apiServer *envtest.APIServer) error {
	if err := os.Remove(c.auditLog()); err != nil && !os.IsNotExist(err) {
		return err
	}
	policy := filepath.Join(c.LogDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	apiServer.Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", c.auditLog()).
		Set("audit-log-format", "json")
	return nil
}

func (c *Cluster) auditLog() string { return filepath.Join(c.LogDir, "kube-apiserver-audit.log") }

// ControllerRefusals returns the requests of the controller that kube-apiserver refused (403:
// its RBAC, or an admission check) since the last call, as "verb resource namespace/name:
// reason". With the controller running as the chart's ServiceAccount, each is a rule the chart
// lacks or a request the controller should not make.
func (c *Cluster) ControllerRefusals() ([]string, error) {
	if c.controllerUser == "" {
		return nil, nil
	}
	f, err := os.Open(c.auditLog())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(c.auditOffset, io.SeekStart); err != nil {
		return nil, err
	}
	var refusals []string
	reader := bufio.NewReader(f)
	for {
		line, err := reader.ReadBytes('\n')
		if err != nil {
			// A line kube-apiserver is still writing is read on the next call.
			break
		}
		c.auditOffset += int64(len(line))
		var event struct {
			Verb      string                    `json:"verb"`
			User      struct{ Username string } `json:"user"`
			ObjectRef *struct {
				Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			RequestURI     string `json:"requestURI"`
			ResponseStatus *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"responseStatus"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal(line, &event) != nil || event.User.Username != c.controllerUser ||
			event.ResponseStatus == nil || event.ResponseStatus.Code != 403 {
			continue
		}
		target := event.RequestURI
		if ref := event.ObjectRef; ref != nil {
			target = strings.TrimSuffix(ref.Resource+"/"+ref.Subresource, "/") + " " + strings.TrimPrefix(ref.Namespace+"/"+ref.Name, "/")
		}
		reason := event.ResponseStatus.Message
		if why := event.Annotations["authorization.k8s.io/reason"]; event.Annotations["authorization.k8s.io/decision"] == "forbid" && why != "" {
			reason += " (" + why + ")"
		}
		refusals = append(refusals, fmt.Sprintf("%s %s: %s", event.Verb, target, reason))
	}
	return refusals, nil
}
