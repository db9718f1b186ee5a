package emulator

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// byID is the object of m that the request's path segment names. A segment that is not a
// number names nothing: Linode answers 404 for both.
func byID[T any](r *http.Request, segment string, m map[int]T) (T, *apiError) {
	id, err := strconv.Atoi(r.PathValue(segment))
	if v, ok := m[id]; err == nil && ok {
		return v, nil
	}
	var none T
	return none, errNotFound()
}

// listInIDOrder answers every object of m as a page of the wire form, in the order of their ids,
// as the API lists them.
func listInIDOrder[T, W any](m map[int]T, toWire func(T) W) (any, *apiError) {
	items := make([]W, 0, len(m))
	for _, id := range sortedKeys(m) {
		items = append(items, toWire(m[id]))
	}
	var sample W
	return mustList(newList(items, sample))
}

// sortedKeys returns a map's keys in ascending order, the order the API
// lists objects in.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

func sortedCapacityKeys(m map[capacityKey]int) []capacityKey {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b capacityKey) int {
		return cmp.Or(cmp.Compare(a.region, b.region), cmp.Compare(a.plan, b.plan))
	})
	return keys
}

// mustList adapts newList to a handler result; marshalling the emulator's
// own wire structs cannot fail short of a programming error.
func mustList(l listResult, err error) (any, *apiError) {
	if err != nil {
		return nil, errStatus(http.StatusInternalServerError, err.Error())
	}
	return l, nil
}
