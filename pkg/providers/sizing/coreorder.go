package sizing

import (
	"cmp"
	"slices"
)

// Core keeps its in-flight NodeClaims in a slice, appends new ones, and before each pod sorts
// the slice by pods held with sort.Slice, then gives the pod to the first NodeClaim that takes
// it. sort.Slice is not stable, so which of the NodeClaims holding as many pods comes first, and
// so where a pod goes and which plans the fleet ends on, depends on the order the sort leaves.
// The simulation keeps its bins in a slice of the same order by sorting it the same way.
//
// slices.SortFunc runs the pattern-defeating quicksort sort.Slice runs, without reflection, and
// leaves the same order (TestBinsSortLikeCore checks both ways against sort.Slice). Sorting
// before every pod still costs most of a simulation, so coreOrder takes a shortcut where the
// quicksort's result is known: between two sorts one bin gains one pod, and when that bin lies
// in the first quarter of at least 50 bins, none of the positions the quicksort samples for its
// pivot is out of order, so it takes its partial insertion sort, which moves the bin right past
// the bins holding fewer pods and keeps every other bin's order.

// shortestPartialInsertion is the slice length from which Go's quicksort tries its partial
// insertion sort on input it samples as ascending.
const shortestPartialInsertion = 50

// coreOrder sorts bins as core's sort.Slice sorts its NodeClaims by pods held, given that they
// were sorted before the bin at changed took one pod (-1: before a bin was appended).
func coreOrder(bins []*bin, changed int) {
	n := len(bins)
	if changed < 0 || n < shortestPartialInsertion || changed >= n/4-1 {
		slices.SortFunc(bins, fewerPods)
		return
	}
	moved := bins[changed]
	i := changed
	for i+1 < n && bins[i+1].pods < moved.pods {
		bins[i] = bins[i+1]
		i++
	}
	bins[i] = moved
}

// fewerPods orders bins by pods held, as core orders its in-flight NodeClaims.
func fewerPods(a, b *bin) int { return cmp.Compare(a.pods, b.pods) }
