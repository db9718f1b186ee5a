package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// throttleName names the priority level and the flow schema ThrottleController creates.
const throttleName = "karpenter-linode-throttled"

// ThrottleController has kube-apiserver's API Priority and Fairness give every request of the
// controller's ServiceAccount a priority level of one concurrency share (about 3 requests at a
// time of kube-apiserver's 600) that lends and borrows nothing and rejects what does not fit at
// once: the controller is answered 429 whenever it asks for more, as by a control plane under
// load. Its flow schema comes before every other but the mandatory exempt one. The returned
// function removes both.
func (c *Cluster) ThrottleController(ctx context.Context) (restore func(context.Context) error, err error) {
	namespace, name, ok := strings.Cut(strings.TrimPrefix(c.controllerUser, "system:serviceaccount:"), ":")
	if !ok {
		return nil, errors.New("the controller runs as no ServiceAccount")
	}
	level := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: throttleName},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	schema := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: throttleName},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: throttleName},
			MatchingPrecedence:         2,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: namespace, Name: name}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	for _, obj := range []client.Object{level, schema} {
		if err := c.Kube.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("throttling the controller: %w", err)
		}
	}
	return func(ctx context.Context) error {
		var errs []error
		for _, obj := range []client.Object{schema, level} {
			errs = append(errs, client.IgnoreNotFound(c.Kube.Delete(ctx, obj)))
		}
		return errors.Join(errs...)
	}, nil
}

// ControllerAnswers counts kube-apiserver's answers of status code to the controller's
// requests so far, as its audit log records them.
func (c *Cluster) ControllerAnswers(code int) (int, error) {
	f, err := os.Open(c.auditLog())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	count := 0
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for scanner.Scan() {
		if !bytes.Contains(scanner.Bytes(), []byte(fmt.Sprintf(`"code":%d`, code))) {
			continue
		}
		var event struct {
			User           struct{ Username string } `json:"user"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(scanner.Bytes(), &event) == nil && event.User.Username == c.controllerUser &&
			event.ResponseStatus != nil && event.ResponseStatus.Code == code {
			count++
		}
	}
	return count, scanner.Err()
}
