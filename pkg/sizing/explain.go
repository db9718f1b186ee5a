package sizing

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/events"
)

// ReasonSizingDeferred is the reason of the event on a pending pod the ceiling leaves for a later
// round.
const ReasonSizingDeferred = "SizingDeferred"

// ReasonSizingTimeBudgetExceeded is the reason of the event on a NodePool whose pending pods took
// longer to size than the policy's time budget: it was offered every plan.
const ReasonSizingTimeBudgetExceeded = "SizingTimeBudgetExceeded"

// maxEventMessage is the longest event message the API server accepts (events.k8s.io's note).
const maxEventMessage = 1024

// explanation is what the policy last offered a NodePool, and why, for the events and the log
// line that say why a NodeClaim got its plan.
type explanation struct {
	// every says that every plan was offered, and why why.
	every bool
	why   string
	// pods counts the pending pods sized for, coming those their workloads have yet to create.
	pods, coming int
	ceiling      planPrice
	passedOver   []string
	floor        float64
	expected     fleet
	cheapest     fleet
	// cheaper and dearer are the fleets the next price levels down and up would have given, nil
	// where there is none (or, cheaper, where it holds no pending pod).
	cheaper, dearer *alternative
	deferred        int
	// held are the plans holding the pods the ceiling holds back, by shape key.
	held map[string]planPrice
}

type planPrice struct {
	name  string
	price float64
}

func (p planPrice) String() string { return fmt.Sprintf("%s ($%.4f/h)", p.name, p.price) }

func (f fleet) String() string { return fmt.Sprintf("$%.4f/h on %d nodes", f.price, f.nodes) }

// alternative is a ceiling the policy did not choose and the fleet it would have given.
type alternative struct {
	ceiling planPrice
	fleet   fleet
}

// message is the explanation as a sentence for an event, within the API server's limit.
func (e *explanation) message(nodePool string) string {
	var b strings.Builder
	if e.every {
		fmt.Fprintf(&b, "The sizing policy offered NodePool %s every plan: %s", nodePool, e.why)
		return truncate(b.String())
	}
	fmt.Fprintf(&b, "The sizing policy offered NodePool %s plans up to %s for %d pending pods", nodePool, e.ceiling, e.pods)
	if e.coming > 0 {
		fmt.Fprintf(&b, " (%d still to be created)", e.coming)
	}
	if len(e.passedOver) > 0 {
		fmt.Fprintf(&b, ", not %s", strings.Join(e.passedOver, ", "))
	}
	if e.floor > 0 {
		fmt.Fprintf(&b, ", none under $%.4f/h while the burst arrives", e.floor)
	}
	fmt.Fprintf(&b, ": expected fleet %s, cheapest fleet %s", e.expected, e.cheapest)
	if e.cheaper != nil {
		fmt.Fprintf(&b, "; next cheaper ceiling %s: %s", e.cheaper.ceiling, e.cheaper.fleet)
	} else {
		b.WriteString("; no cheaper ceiling holds a pending pod")
	}
	if e.dearer != nil {
		fmt.Fprintf(&b, "; next dearer ceiling %s: %s", e.dearer.ceiling, e.dearer.fleet)
	} else {
		b.WriteString("; no dearer plan")
	}
	if e.deferred > 0 {
		fmt.Fprintf(&b, "; %d pods left for a later round", e.deferred)
	}
	return truncate(b.String())
}

func truncate(message string) string {
	if len(message) <= maxEventMessage {
		return message
	}
	const ellipsis = "..."
	return message[:maxEventMessage-len(ellipsis)] + ellipsis
}

// Explain says what the policy last offered the NodePool and why, as an event message. It reads
// what the last provisioning round left and calls nothing.
func (p *Policy) Explain(nodePool string) string {
	if e, ok := p.explanations.Load(nodePool); ok {
		return e.(*explanation).message(nodePool)
	}
	return (&explanation{every: true, why: "it has not sized for the NodePool's pending pods"}).message(nodePool)
}

// deferredEventLimiter keeps the events on held-back pods from flooding the API server when a
// ceiling holds back many pods: it is shared by every NodePool, as core's nomination events'.
var deferredEventLimiter = flowcontrol.NewTokenBucketRateLimiter(5, 10)

// deferredEventEvery is how often a pod held back round after round is told so again.
const deferredEventEvery = 5 * time.Minute

// timeBudgetEvents are events on NodePools offered every plan because sizing for their pods
// took too long: one per NodePool every deferredEventEvery, however many rounds it takes too long.
var timeBudgetEventLimiter = flowcontrol.NewTokenBucketRateLimiter(1, 5)

// timeBudgetEvent tells a NodePool that sizing for its pending pods took longer than the budget.
func timeBudgetEvent(nodePool *karpv1.NodePool, budget time.Duration, pods, shapes int, hold time.Duration) events.Event {
	return events.Event{
		InvolvedObject: nodePool,
		Type:           corev1.EventTypeWarning,
		Reason:         ReasonSizingTimeBudgetExceeded,
		Message: truncate(fmt.Sprintf("Offered every plan: sizing for %d pending pods in %d shapes took longer than its time budget of %v (SIZING_TIME_BUDGET); "+
			"every plan is offered without sizing for %v, or until the pending pods are in fewer than half as many shapes",
			pods, shapes, budget, hold)),
		DedupeValues:  []string{string(nodePool.UID)},
		DedupeTimeout: deferredEventEvery,
		RateLimiter:   timeBudgetEventLimiter,
	}
}

// deferredEvent tells a pending pod that the round's ceiling holds it back.
func deferredEvent(pod *pendingPod, nodePool string, ceiling, holding planPrice) events.Event {
	return events.Event{
		InvolvedObject: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.key.Name, Namespace: pod.key.Namespace, UID: pod.uid}},
		Type:           corev1.EventTypeNormal,
		Reason:         ReasonSizingDeferred,
		Message: truncate(fmt.Sprintf("Left for a later provisioning round: NodePool %s is offered plans up to %s this round, and the cheapest plan that holds the pod is %s",
			nodePool, ceiling, holding)),
		DedupeValues:  []string{string(pod.uid)},
		DedupeTimeout: deferredEventEvery,
		RateLimiter:   deferredEventLimiter,
	}
}
