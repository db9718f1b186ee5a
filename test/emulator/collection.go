package emulator

import (
	"cmp"
	"net/http"
	"strconv"
)

// collection is one kind of API object by id: Linodes, LKE clusters and pools, firewalls, rule
// sets, VPCs, subnets, placement groups. Its objects are found by the path parameter that names
// them and listed in id order, as the API lists them. The handlers of the list, get, delete and
// update routes of every kind are made below from its lookup and wire form (listOf, listUnder,
// getOf, deleteOf, changeOf), and every list is paginated and filtered in one place
// (encodeList). Like all state it is guarded by the lock the router takes.
type collection[T any] map[int]T

// lookup is the object the request's path parameter names. A parameter that is not a number
// names nothing: Linode answers 404 for both.
func (c collection[T]) lookup(r *http.Request, param string) (T, *apiError) {
	id, err := strconv.Atoi(r.PathValue(param))
	if err != nil {
		var none T
		return none, errNotFound()
	}
	return byKey(c, id)
}

// byKey is the object of m under key; Linode answers 404 when there is none. Objects named by
// their address (reserved IPs, IPv6 ranges) or a slug (private images) are found with it.
func byKey[K comparable, T any](m map[K]T, key K) (T, *apiError) {
	v, ok := m[key]
	if !ok {
		return v, errNotFound()
	}
	return v, nil
}

// inIDOrder is every object, in the order of their ids.
func (c collection[T]) inIDOrder() []T {
	return valuesWhere(c, func(T) bool { return true })
}

// valuesWhere is the objects of m that keep keeps (a cluster's pools, a Linode's IPv6 ranges), in
// the order of their keys.
func valuesWhere[K cmp.Ordered, T any](m map[K]T, keep func(T) bool) []T {
	var out []T
	for _, key := range sortedKeys(m) {
		if v := m[key]; keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// handler answers a request with the body to encode, or an API error.
type handler = func(*http.Request) (any, *apiError)

// listOf answers every object that all returns as a page of the wire form.
func listOf[T, W any](all func() []T, toWire func(T) W) handler {
	return func(*http.Request) (any, *apiError) { return wireList(all(), toWire) }
}

// listUnder answers the objects below the one the path names (a Linode's disks, a cluster's
// pools) as a page; 404 when the path's object does not exist.
func listUnder[P, W any](lookupParent func(*http.Request) (P, *apiError), listed func(P) []W) handler {
	return func(r *http.Request) (any, *apiError) {
		parent, err := lookupParent(r)
		if err != nil {
			return nil, err
		}
		var sample W
		return mustList(newList(listed(parent), sample))
	}
}

// getOf answers the object the path names in its wire form.
func getOf[T, W any](lookup func(*http.Request) (T, *apiError), toWire func(T) W) handler {
	return func(r *http.Request) (any, *apiError) {
		v, err := lookup(r)
		if err != nil {
			return nil, err
		}
		return toWire(v), nil
	}
}

// deleteOf removes the object the path names and answers "{}".
func deleteOf[T any](lookup func(*http.Request) (T, *apiError), remove func(T)) handler {
	return func(r *http.Request) (any, *apiError) {
		v, err := lookup(r)
		if err != nil {
			return nil, err
		}
		remove(v)
		return emptyObject{}, nil
	}
}

// wireList is items' wire forms as a list to paginate and filter.
func wireList[T, W any](items []T, toWire func(T) W) (any, *apiError) {
	var sample W
	return mustList(newList(toWires(items, toWire), sample))
}

func toWires[T, W any](items []T, toWire func(T) W) []W {
	out := make([]W, 0, len(items))
	for _, v := range items {
		out = append(out, toWire(v))
	}
	return out
}

// changeOf decodes the request's body into a B and hands it, with the object the path names, to
// change: the handler of an update of one object or of an action on it. A body that does not
// decode, or that its validate method refuses, is answered 400 before the object is looked up,
// as Linode does.
func changeOf[T, B any](lookup func(*http.Request) (T, *apiError), change func(T, B) (any, *apiError)) handler {
	return func(r *http.Request) (any, *apiError) {
		var body B
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if v, ok := any(&body).(interface{ validate() *apiError }); ok {
			if err := v.validate(); err != nil {
				return nil, err
			}
		}
		v, err := lookup(r)
		if err != nil {
			return nil, err
		}
		return change(v, body)
	}
}

// found is an object below another that a path names: a cluster's pool, a Linode's disk.
type found[P, C any] struct {
	parent P
	child  C
}

// nested adapts the lookup of an object below another to the handler makers.
func nested[P, C any](lookup func(*http.Request) (P, C, *apiError)) func(*http.Request) (found[P, C], *apiError) {
	return func(r *http.Request) (found[P, C], *apiError) {
		parent, child, err := lookup(r)
		return found[P, C]{parent, child}, err
	}
}
