package sizing

import (
	"cmp"
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	corescheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

// The policy's model of Karpenter core v1.15.0: every assumption it makes about how core
// provisions is here, each citing the file (under sigs.k8s.io/karpenter@v1.15.0/pkg) and the
// function it reproduces. The differential test (differential_test.go) checks them together
// against core's own scheduler. Elsewhere the policy assumes, and cites here:
//
//   - core's scheduling queue takes pods by most CPU, then most memory, then the oldest, then by
//     UID: controllers/provisioning/scheduling/queue.go, byCPUAndMemoryDescending (inQueueOrder,
//     queue.go);
//   - core relaxes a pod's preferences one at a time, preferred pod (anti-)affinity before
//     preferred node affinity, and tries each OR'd required node selector term in turn:
//     controllers/provisioning/scheduling/preferences.go, Preferences.Relax (shapeOf, shape.go);
//   - core tries NodePools by weight, highest first, and gives a pod to the first that takes it:
//     utils/nodepool/nodepool.go, OrderByWeight, and controllers/provisioning/scheduling/scheduler.go,
//     Scheduler.add (Policy.rankedNodePools, ranking.go);
//   - Create launches the cheapest offering of the NodeClaim's remaining instance types:
//     controllers/provisioning/scheduling/nodeclaim.go, NodeClaim.Add and
//     filterInstanceTypesByRequirements (pack.go, bin.holdingPlan).
//
// Core keeps its in-flight NodeClaims in a slice, appends new ones, and before each pod sorts
// the slice by pods held with sort.Slice (controllers/provisioning/scheduling/scheduler.go,
// Scheduler.add), then gives the pod to the first NodeClaim that takes
// it. sort.Slice is not stable, so which of the NodeClaims holding as many pods comes first, and
// so where a pod goes and which plans the fleet ends on, depends on the order the sort leaves.
// The simulation keeps its bins in a slice of the same order by sorting it the same way.
//
// slices.SortFunc runs the pattern-defeating quicksort sort.Slice runs, without reflection, and
// leaves the same order (TestBinsSortLikeCore checks both ways against sort.Slice). Sorting
// before every pod costs time in proportion to the bins, and so most of a simulation of
// thousands of pods, so coreOrder takes a shortcut where the quicksort's result is known: between
// two sorts one bin gains one pod, or one bin of one pod is appended. When the bins are still in
// order, the quicksort leaves them as they are. When they are not, and the positions the
// quicksort samples for its pivot are in order (as they always are when the bin that changed
// lies in the first quarter, or is the new last one), it takes its partial insertion sort on at
// least 50 bins, which moves the bin that gained a pod right past the bins holding fewer pods,
// or the new bin left past those holding more, and keeps every other bin's order.

// shortestPartialInsertion is the slice length from which Go's quicksort tries its partial
// insertion sort on input it samples as ascending.
const shortestPartialInsertion = 50

// coreOrder sorts bins as core's sort.Slice sorts its NodeClaims by pods held, given that they
// were sorted before the bin at changed took one pod (-1: before a bin was appended), and
// returns how many bins at the front kept their place and where the bin that changed is now;
// every other bin keeps its order, unless sorted says the quicksort ran in full.
func coreOrder(bins []slot, changed int) (kept, at int, sorted bool) {
	n := len(bins)
	if changed < 0 {
		changed = n - 1
		if n < 2 || bins[n-2].pods <= bins[n-1].pods {
			return n, changed, false
		}
	} else if changed == n-1 || bins[changed].pods <= bins[changed+1].pods {
		return n, changed, false
	}
	moved := bins[changed]
	switch {
	case n < shortestPartialInsertion || !pivotSamplesInOrder(bins):
		slices.SortFunc(bins, fewerPods)
		return 0, slices.Index(bins, moved), true
	case changed == n-1:
		// The partial insertion sort moves the new bin left past the bins holding more pods.
		i := firstHolding(bins[:n-1], moved.pods+1)
		copy(bins[i+1:], bins[i:n-1])
		bins[i] = moved
		return i, i, false
	default:
		// It moves the bin that gained a pod right past the bins holding fewer pods.
		i := firstHolding(bins[changed+1:], moved.pods)
		copy(bins[changed:], bins[changed+1:changed+1+i])
		bins[changed+i] = moved
		return changed, changed + i, false
	}
}

// firstHolding is the index of the first of the sorted bins that holds at least pods, len(bins)
// when none does.
func firstHolding(bins []slot, pods int32) int {
	lo, hi := 0, len(bins)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bins[mid].pods < pods {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// pivotSamplesInOrder says whether Go's quicksort, choosing the pivot of at least 50 bins by
// Tukey's ninther, finds every pair it compares in order: then it tries its partial insertion
// sort first.
func pivotSamplesInOrder(bins []slot) bool {
	inOrder := true
	// ordered is the quicksort's order2: the pair in ascending order, noting a pair out of order.
	ordered := func(a, b int) (int, int) {
		if bins[b].pods < bins[a].pods {
			inOrder = false
			return b, a
		}
		return a, b
	}
	median := func(a, b, c int) int {
		a, b = ordered(a, b)
		b, _ = ordered(b, c)
		_, b = ordered(a, b)
		return b
	}
	quarter := len(bins) / 4
	i, j, k := quarter, quarter*2, quarter*3
	median(median(i-1, i, i+1), median(j-1, j, j+1), median(k-1, k, k+1))
	return inOrder
}

// fewerPods orders bins by pods held, as core orders its in-flight NodeClaims.
func fewerPods(a, b slot) int { return cmp.Compare(a.pods, b.pods) }

// ignoresPreferences says whether core's scheduler runs with its Ignore preference policy; it
// respects preferences when its settings are not in the context, as by default. Core:
// controllers/provisioning/provisioner.go, Provisioner.Schedule (PreferencePolicyIgnore).
func ignoresPreferences(ctx context.Context) (ignore bool) {
	defer func() {
		if recover() != nil {
			ignore = false
		}
	}()
	return coreoptions.FromContext(ctx).PreferencePolicy == coreoptions.PreferencePolicyIgnore
}

// refusedByCore says whether core's provisioner refuses the pod whatever the NodePools offer, as
// its Provisioner.Validate does for node selectors and required node affinity: a term with
// matchFields, or a requirement no NodeClaim could carry (a restricted label such as
// kubernetes.io/hostname, a malformed one). The simulation reads neither, and would count the
// pod as demand for as long as it exists. Core: controllers/provisioning/provisioner.go,
// Provisioner.Validate, validateNodeSelector, validateAffinity and validateNodeSelectorTerm.
func refusedByCore(ctx context.Context, p *corev1.Pod) bool {
	terms := make([]corev1.NodeSelectorTerm, 0, len(p.Spec.NodeSelector))
	for key, value := range p.Spec.NodeSelector {
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}})
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = append(terms, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms...)
	}
	for _, term := range terms {
		if term.MatchFields != nil {
			return true
		}
		for _, r := range term.MatchExpressions {
			if karpv1.ValidateRequirement(ctx, karpv1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: r.Operator, Values: r.Values}) != nil {
				return true
			}
		}
	}
	return false
}

// hardTaints are the NodePool's taints a pod must tolerate; core tolerates PreferNoSchedule
// taints for a pod that fits nowhere else. Core: controllers/provisioning/scheduling/preferences.go,
// Preferences.toleratePreferNoScheduleTaints, and scheduling/taints.go, Taints.Tolerates.
func hardTaints(template *corescheduling.NodeClaimTemplate) scheduling.Taints {
	return slices.DeleteFunc(slices.Clone(template.Spec.Taints), func(t corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectPreferNoSchedule
	})
}

// daemonOverhead is what the DaemonSets that would run on a node of the plan in the NodePool
// ask for, as core's scheduler counts it. Core: controllers/provisioning/scheduling/scheduler.go,
// buildDaemonOverheadGroups, and nodeclaim.go, NodeClaim.addDaemonRequests.
func daemonOverhead(template *corescheduling.NodeClaimTemplate, taints scheduling.Taints, it *cloudprovider.InstanceType, daemons []*corev1.Pod) corev1.ResourceList {
	var compatible []*corev1.Pod
	for _, d := range daemons {
		if taints.Tolerates(d.Spec.Tolerations) != nil {
			continue
		}
		requirements := scheduling.NewStrictPodRequirements(d)
		if template.Requirements.IsCompatible(requirements, scheduling.AllowUndefinedWellKnownLabels) && it.Requirements.Intersects(requirements) == nil {
			compatible = append(compatible, d)
		}
	}
	if len(compatible) == 0 {
		return nil
	}
	return resources.RequestsForPods(compatible...)
}

// askedByDisruption says whether core's disruption controller asks. Its simulations reschedule the
// pods of the nodes it would remove or replace, which are not the pending pods the ceiling was
// chosen for, and it only ever replaces nodes with cheaper ones: offered every plan, consolidation
// can replace a node with any cheaper plan the NodePool allows, as core does on its own. Core:
// controllers/disruption/controller.go, Controller.Name ("disruption"), and queue.go, Queue.Name
// ("disruption.queue").
func askedByDisruption(ctx context.Context) bool {
	name := injection.GetControllerName(ctx)
	return name == "disruption" || strings.HasPrefix(name, "disruption.")
}

// provisionerName is the controller name core's provisioner asks with. Core:
// controllers/provisioning/provisioner.go, Provisioner.Name.
const provisionerName = "provisioner"
