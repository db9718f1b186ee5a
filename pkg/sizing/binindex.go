package sizing

// binIndex holds the pack's bins in core's order of its in-flight NodeClaims (the packer's
// order), as a tree in which each subtree knows the least room its bins use in each dimension.
// A pod goes to the first bin in that order that holds it; with thousands of pods of distinct
// shapes no bin is closed to the next pod, and trying every bin before the one that takes it
// made a pack quadratic in the pods. The tree skips every run of bins none of which has room
// for the pod in the largest plan it might launch, and finds the first bin in logarithmic time
// where most bins are too full. It is an implicit treap: a bin's place is its rank, so the moves
// coreOrder makes (one bin out of its place and into another) cost a split and a merge.
type binIndex struct {
	dims int
	// nodes are the tree's nodes, one per bin, by bin; least is each node's subtree's least room
	// used, dims per node.
	nodes []binNode
	least vector
	root  int32
	// seed draws the nodes' priorities.
	seed uint64
	// moves are coreOrder's moves since the index last followed the order, held bins how many
	// bins they leave in it, and sorted says coreOrder sorted the whole order since: the index
	// follows the order only when asked to find a bin, which most pods of a shape never do.
	moves  []binMove
	held   int
	sorted bool
}

// binMove is one of coreOrder's moves: the bin went from position from (-1: it opened) to to.
type binMove struct {
	bin      int32
	from, to int
}

type binNode struct {
	left, right int32
	size        int32
	priority    uint32
}

// noNode is the empty tree.
const noNode = -1

// reset empties the index for bins of dims dimensions, keeping its memory.
func (x *binIndex) reset(dims int) {
	x.dims, x.nodes, x.least, x.root, x.seed = dims, x.nodes[:0], x.least[:0], noNode, 0x9e3779b97f4a7c15
	x.moves, x.held, x.sorted = x.moves[:0], 0, false
}

func (x *binIndex) size(t int32) int32 {
	if t == noNode {
		return 0
	}
	return x.nodes[t].size
}

// leastOf is the subtree's least room used.
func (x *binIndex) leastOf(t int32) vector { return x.least[int(t)*x.dims : int(t+1)*x.dims] }

// pull works out the node's size and least room used from its bin's and its children's.
func (x *binIndex) pull(t int32, bins []bin) {
	n := &x.nodes[t]
	n.size = 1 + x.size(n.left) + x.size(n.right)
	least := x.leastOf(t)
	copy(least, bins[t].used)
	if n.left != noNode {
		for d, amount := range x.leastOf(n.left) {
			least[d] = min(least[d], amount)
		}
	}
	if n.right != noNode {
		for d, amount := range x.leastOf(n.right) {
			least[d] = min(least[d], amount)
		}
	}
}

// refreshAt works out again the least room used on the path to the bin at position at, which
// took a pod and kept its place: cheaper than taking it out and putting it back.
func (x *binIndex) refreshAt(t int32, at int32, bins []bin) {
	n := x.nodes[t]
	if left := x.size(n.left); at < left {
		x.refreshAt(n.left, at, bins)
	} else if at > left {
		x.refreshAt(n.right, at-left-1, bins)
	}
	x.pull(t, bins)
}

// split splits the subtree into its first k bins and the others.
func (x *binIndex) split(t int32, k int32, bins []bin) (int32, int32) {
	if t == noNode {
		return noNode, noNode
	}
	n := &x.nodes[t]
	if x.size(n.left) >= k {
		l, r := x.split(n.left, k, bins)
		x.nodes[t].left = r
		x.pull(t, bins)
		return l, t
	}
	l, r := x.split(n.right, k-x.size(n.left)-1, bins)
	x.nodes[t].right = l
	x.pull(t, bins)
	return t, r
}

// merge joins two subtrees, a's bins before b's.
func (x *binIndex) merge(a, b int32, bins []bin) int32 {
	switch {
	case a == noNode:
		return b
	case b == noNode:
		return a
	case x.nodes[a].priority > x.nodes[b].priority:
		x.nodes[a].right = x.merge(x.nodes[a].right, b, bins)
		x.pull(a, bins)
		return a
	default:
		x.nodes[b].left = x.merge(a, x.nodes[b].left, bins)
		x.pull(b, bins)
		return b
	}
}

// add makes the node of a bin the index has not held yet; bins are added in the order they open.
func (x *binIndex) add(which int32, bins []bin) int32 {
	for int32(len(x.nodes)) <= which {
		x.seed ^= x.seed << 13
		x.seed ^= x.seed >> 7
		x.seed ^= x.seed << 17
		x.nodes = append(x.nodes, binNode{left: noNode, right: noNode, priority: uint32(x.seed)})
		x.least = append(x.least, make(vector, x.dims)...)
	}
	x.nodes[which].left, x.nodes[which].right = noNode, noNode
	x.pull(which, bins)
	return which
}

// insertAt puts the bin at position at.
func (x *binIndex) insertAt(at int, which int32, bins []bin) {
	l, r := x.split(x.root, int32(at), bins)
	x.root = x.merge(x.merge(l, x.add(which, bins), bins), r, bins)
}

// removeAt takes the bin at position at out.
func (x *binIndex) removeAt(at int, bins []bin) {
	l, r := x.split(x.root, int32(at), bins)
	_, r = x.split(r, 1, bins)
	x.root = x.merge(l, r, bins)
}

// rebuild holds the bins in the order's order, as a balanced tree whose priorities fall with
// depth.
func (x *binIndex) rebuild(order []slot, bins []bin) {
	for _, s := range order {
		x.add(s.bin, bins)
	}
	var build func(lo, hi int, depth uint32) int32
	build = func(lo, hi int, depth uint32) int32 {
		if lo >= hi {
			return noNode
		}
		mid := int(uint(lo+hi) >> 1)
		t := order[mid].bin
		x.nodes[t] = binNode{left: build(lo, mid, depth+1), right: build(mid+1, hi, depth+1), priority: ^uint32(0) - depth<<24}
		x.pull(t, bins)
		return t
	}
	x.root = build(0, len(order), 0)
}

// note records the move coreOrder made after the bin at moved (its position before; -1 for the
// last, which coreOrder takes for the one that changed) took a pod or opened: it is now at at,
// unless sorted says coreOrder sorted the whole order. The order holds one bin more than before
// when it opened.
func (x *binIndex) note(order []slot, moved, at int, sorted bool) {
	if sorted {
		x.sorted = true
	}
	if len(order) == 0 {
		return
	}
	if x.held < len(order) {
		x.moves = append(x.moves, binMove{bin: order[at].bin, from: -1, to: at})
		x.held = len(order)
		return
	}
	if moved < 0 {
		moved = len(order) - 1
	}
	x.moves = append(x.moves, binMove{bin: order[at].bin, from: moved, to: at})
}

// follow brings the index in line with the order: it makes coreOrder's moves since it last
// did, or, when they are many or coreOrder sorted the whole order, builds the tree again.
func (x *binIndex) follow(order []slot, bins []bin) {
	if x.sorted || len(x.moves) > len(order)/8 {
		x.rebuild(order, bins)
	} else {
		for _, m := range x.moves {
			if m.from == m.to {
				x.refreshAt(x.root, int32(m.to), bins)
				continue
			}
			if m.from >= 0 {
				x.removeAt(m.from, bins)
			}
			x.insertAt(m.to, m.bin, bins)
		}
	}
	x.moves, x.sorted = x.moves[:0], false
}

// first calls takes with each bin, in order from position from up to before position to, that may
// have room for more in some dimension at most room, until takes accepts one, and returns that
// bin's position, or -1. A bin whose room used plus more exceeds room in any dimension is skipped.
func (x *binIndex) first(from, to int, room, more vector, takes func(which int32, at int) bool) int {
	return x.find(x.root, 0, from, to, room, more, takes)
}

func (x *binIndex) find(t int32, offset, from, to int, room, more vector, takes func(which int32, at int) bool) int {
	if t == noNode || offset >= to || offset+int(x.nodes[t].size) <= from || !fits(room, x.leastOf(t), more) {
		return -1
	}
	n := x.nodes[t]
	if at := x.find(n.left, offset, from, to, room, more, takes); at >= 0 {
		return at
	}
	at := offset + int(x.size(n.left))
	if at >= to {
		return -1
	}
	if at >= from && takes(t, at) {
		return at
	}
	return x.find(n.right, at+1, from, to, room, more, takes)
}
