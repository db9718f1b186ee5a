package sizing

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"sync"
)

// packMemo keeps the fleets packed for recent decisions, by everything a pack reads: when one
// more pod arrives, the ceilings' packs of the shapes it does not join pack the same pods the
// same way, and a decision over thousands of pods need not pack them again. It keeps two
// generations of at most packMemoSize fleets, so that it holds at least the packs of the last
// decisions; a fleet found in the older moves to the newer. It is shared by concurrent decisions.
type packMemo struct {
	mu               sync.Mutex
	current, earlier map[packID]packedResult
}

// packMemoSize is how many fleets a generation holds: a 5,000-pod decision over 50 shapes and
// 23 plans packs 63 times, and the round's other NodePools pack too.
const packMemoSize = 512

// packID is a 128-bit FNV-1a hash of a pack's inputs (packIDOf).
type packID [16]byte

type packedResult struct {
	fleet  fleet
	beyond int
}

func newPackMemo() *packMemo {
	return &packMemo{current: map[packID]packedResult{}, earlier: map[packID]packedResult{}}
}

func (m *packMemo) get(id packID) (packedResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.current[id]; ok {
		return r, true
	}
	r, ok := m.earlier[id]
	if ok {
		m.putLocked(id, r)
	}
	return r, ok
}

func (m *packMemo) put(id packID, r packedResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(id, r)
}

func (m *packMemo) putLocked(id packID, r packedResult) {
	if len(m.current) >= packMemoSize {
		m.earlier, m.current = m.current, make(map[packID]packedResult, packMemoSize)
	}
	m.current[id] = r
}

// packIDOf identifies what pack reads: the plans' prices and rooms, the ceiling, the starting
// nodes' plans and free room, and the queue's runs, each with the shape's requests, plans and
// spread, and which of the queue's shapes it is, since pack tells shapes apart by identity.
// buf is scratch memory, returned for reuse.
func packIDOf(buf []byte, plans []plan, queue []run, c ceiling, starting []startingRoom) (packID, []byte) {
	b := buf[:0]
	b = binary.AppendVarint(b, int64(len(plans)))
	for _, p := range plans {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.price))
		b = appendVector(b, p.room)
	}
	b = binary.AppendVarint(b, int64(c.top))
	b = binary.AppendUvarint(b, boolBit(c.sole))
	b = binary.AppendVarint(b, int64(len(starting)))
	for _, s := range starting {
		b = binary.AppendVarint(b, int64(s.plan))
		b = appendVector(b, s.free)
	}
	b = binary.AppendVarint(b, int64(len(queue)))
	seen := make(map[*shape]int, len(queue))
	for _, r := range queue {
		b = binary.AppendVarint(b, int64(r.pods))
		number, ok := seen[r.of]
		if !ok {
			number = -1
		}
		b = binary.AppendVarint(b, int64(number))
		if ok {
			continue
		}
		seen[r.of] = len(seen)
		s := r.of
		b = appendVector(b, s.requests)
		b = binary.AppendVarint(b, int64(len(s.plans)))
		for _, word := range s.plans {
			b = binary.LittleEndian.AppendUint64(b, word)
		}
		b = binary.AppendVarint(b, int64(s.perNode))
		b = binary.AppendVarint(b, int64(len(s.group)))
		b = append(b, s.group...)
	}
	h := fnv.New128a()
	_, _ = h.Write(b)
	var id packID
	h.Sum(id[:0])
	return id, b
}

func appendVector(b []byte, v vector) []byte {
	b = binary.AppendVarint(b, int64(len(v)))
	for _, amount := range v {
		b = binary.AppendVarint(b, amount)
	}
	return b
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
