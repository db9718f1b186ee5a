package localcluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
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

// ControllerRefusals returns the requests of the controller, and of the node identity component,
// that kube-apiserver refused (403: its RBAC, or an admission check) since the last call, as
// "verb resource namespace/name by serviceaccount: reason". With both running as the chart's
// ServiceAccounts, each is a rule the chart lacks or a request they should not make. A request RBAC refused that it allows now
// is left out: kube-apiserver refuses every request for the moments after it starts, before its
// authorizer has read the cluster's roles (RestartAPIServer), whatever the chart grants.
func (c *Cluster) ControllerRefusals() ([]string, error) {
	if len(c.serviceAccountUsers) == 0 {
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
				APIGroup, Resource, Subresource, Namespace, Name string
			} `json:"objectRef"`
			RequestURI     string `json:"requestURI"`
			ResponseStatus *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"responseStatus"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal(line, &event) != nil || !slices.Contains(c.serviceAccountUsers, event.User.Username) ||
			event.ResponseStatus == nil || event.ResponseStatus.Code != 403 {
			continue
		}
		refusedByRBAC := event.Annotations["authorization.k8s.io/decision"] == "forbid"
		if ref := event.ObjectRef; refusedByRBAC && ref != nil {
			allowed, err := c.allowed(event.User.Username, event.Verb, authorizationv1.ResourceAttributes{
				Group: ref.APIGroup, Resource: ref.Resource, Subresource: ref.Subresource, Namespace: ref.Namespace, Name: ref.Name,
			})
			if err != nil {
				return nil, err
			}
			if allowed {
				continue
			}
		}
		target := event.RequestURI
		if ref := event.ObjectRef; ref != nil {
			target = strings.TrimSuffix(ref.Resource+"/"+ref.Subresource, "/") + " " + strings.TrimPrefix(ref.Namespace+"/"+ref.Name, "/")
		}
		reason := event.ResponseStatus.Message
		if why := event.Annotations["authorization.k8s.io/reason"]; refusedByRBAC && why != "" {
			reason += " (" + why + ")"
		}
		refusals = append(refusals, fmt.Sprintf("%s %s by %s: %s", event.Verb, target, strings.TrimPrefix(event.User.Username, "system:serviceaccount:"), reason))
	}
	return refusals, nil
}

// allowed asks kube-apiserver's authorizer whether the ServiceAccount user may make the request
// now.
func (c *Cluster) allowed(user, verb string, attributes authorizationv1.ResourceAttributes) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	attributes.Verb = verb
	namespace := strings.Split(strings.TrimPrefix(user, "system:serviceaccount:"), ":")[0]
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		ResourceAttributes: &attributes,
	}}
	if err := c.Kube.Create(ctx, review); err != nil {
		return false, fmt.Errorf("asking whether %s may %s %s: %w", user, verb, attributes.Resource, err)
	}
	return review.Status.Allowed, nil
}
