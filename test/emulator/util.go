package emulator

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
)

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

// setIfGiven sets *field to what an update request gave, when it gave it.
func setIfGiven[T any](field, given *T) {
	if given != nil {
		*field = *given
	}
}
