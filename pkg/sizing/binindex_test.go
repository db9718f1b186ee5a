package sizing

import (
	"math/rand"
	"testing"
)

// The index must find, from any position (and up to any), the first bin in core's order that the pod fits in,
// as trying the bins one by one does, however coreOrder moved them: bins opened, bins that
// took pods moved right, whole sorts.
func TestBinIndexFindsTheFirstBinInCoreOrder(t *testing.T) {
	//nolint:gosec // Reproducible cases, not security.
	r := rand.New(rand.NewSource(1))
	for range 50 {
		var p packer
		p.index.reset(2)
		room := vector{1000, 1000}
		changed := -1
		for step := range 2000 {
			moved := changed
			_, at, sorted := coreOrder(p.order, changed)
			p.index.note(p.order, moved, at, sorted)
			more := vector{int64(1 + r.Intn(300)), int64(1 + r.Intn(300))}
			from, to := 0, len(p.order)
			if len(p.order) > 0 {
				from = r.Intn(len(p.order))
				// Mostly the whole order from there, sometimes only up to a position.
				if r.Intn(3) == 0 {
					to = from + r.Intn(len(p.order)-from+1)
				}
			}
			want := -1
			for i := from; i < to; i++ {
				if fits(room, p.bins[p.order[i].bin].used, more) {
					want = i
					break
				}
			}
			got := want
			// The index follows the order only when asked, after any number of moves.
			if r.Intn(4) == 0 {
				p.index.follow(p.order, p.bins)
				got = p.index.first(from, to, room, more, func(which int32, at int) bool {
					if p.order[at].bin != which {
						t.Fatalf("step %d: position %d holds bin %d in the index, %d in the order", step, at, which, p.order[at].bin)
					}
					return fits(room, p.bins[which].used, more)
				})
			}
			if got != want {
				t.Fatalf("step %d: the index found position %d, trying each bin %d", step, got, want)
			}
			if got >= 0 {
				b := &p.bins[p.order[got].bin]
				for d := range b.used {
					b.used[d] += more[d]
				}
				p.order[got].pods++
				changed = got
				continue
			}
			p.bins = append(p.bins, bin{used: more.clone()})
			p.order = append(p.order, slot{pods: 1, bin: int32(len(p.bins) - 1)})
			changed = -1
		}
	}
}

func (v vector) clone() vector { return append(vector(nil), v...) }
