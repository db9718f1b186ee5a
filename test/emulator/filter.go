package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The X-Filter language, as far as the emulator implements it:
//
//	{"label": "x"}                         equality (AND over several keys)
//	{"id": {"+gt": 5}}                     +eq +neq +contains +gt +gte +lt +lte
//	{"+or": [{...}, {...}]}, {"+and": [...]}
//	{"+order_by": "label", "+order": "desc"}   top level only
//
// A field holding an array (tags) matches when any element matches. A field
// of a nested object is named by its path, as the API does ("entity.id").
// Anything else (unknown operators, unknown fields, malformed JSON) is
// rejected with a 400 rather than silently matching everything, so a client
// bug shows up in tests instead of deleting the wrong objects.

type condition interface {
	match(obj map[string]any) bool
}

type allOf []condition

func (c allOf) match(obj map[string]any) bool {
	for _, sub := range c {
		if !sub.match(obj) {
			return false
		}
	}
	return true
}

type anyOf []condition

func (c anyOf) match(obj map[string]any) bool {
	for _, sub := range c {
		if sub.match(obj) {
			return true
		}
	}
	return false
}

type comparison struct {
	field string
	op    string
	value any
}

var comparisonOps = map[string]bool{
	"+eq": true, "+neq": true, "+contains": true,
	"+gt": true, "+gte": true, "+lt": true, "+lte": true,
}

func (c comparison) match(obj map[string]any) bool {
	v := fieldValue(obj, c.field)
	if c.op == "+neq" {
		return !(comparison{c.field, "+eq", c.value}).match(obj)
	}
	if arr, ok := v.([]any); ok {
		return slices.ContainsFunc(arr, func(el any) bool { return compareScalar(el, c.op, c.value) })
	}
	return compareScalar(v, c.op, c.value)
}

// fieldValue is the value at a dotted path ("entity.id"), nil when absent.
func fieldValue(obj map[string]any, path string) any {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		return obj[path]
	}
	inner, ok := obj[head].(map[string]any)
	if !ok {
		return nil
	}
	return fieldValue(inner, rest)
}

func compareScalar(v any, op string, want any) bool {
	switch op {
	case "+eq":
		return v == want
	case "+contains":
		s, ok1 := v.(string)
		sub, ok2 := want.(string)
		return ok1 && ok2 && strings.Contains(s, sub)
	}
	order, ok := compareOrdered(v, want)
	if !ok {
		return false
	}
	switch op {
	case "+gt":
		return order > 0
	case "+gte":
		return order >= 0
	case "+lt":
		return order < 0
	default: // +lte
		return order <= 0
	}
}

// compareOrdered compares two numbers or two strings; other pairs are not
// ordered.
func compareOrdered(a, b any) (int, bool) {
	switch av := a.(type) {
	case float64:
		if bv, ok := b.(float64); ok {
			return cmp.Compare(av, bv), true
		}
	case string:
		if bv, ok := b.(string); ok {
			return strings.Compare(av, bv), true
		}
	}
	return 0, false
}

type filter struct {
	cond    condition
	orderBy string
	desc    bool
}

func parseFilter(header string, fields map[string]bool) (*filter, error) {
	var top map[string]any
	if err := json.Unmarshal([]byte(header), &top); err != nil {
		return nil, fmt.Errorf("Invalid filter: not a JSON object")
	}
	f := &filter{}
	if v, ok := top["+order_by"]; ok {
		s, isStr := v.(string)
		if !isStr || !fields[s] {
			return nil, fmt.Errorf("Cannot order by %v", v)
		}
		f.orderBy = s
		delete(top, "+order_by")
	}
	if v, ok := top["+order"]; ok {
		switch v {
		case "asc":
		case "desc":
			f.desc = true
		default:
			return nil, fmt.Errorf("+order must be asc or desc")
		}
		delete(top, "+order")
	}
	cond, err := parseConditions(top, fields)
	if err != nil {
		return nil, err
	}
	f.cond = cond
	return f, nil
}

func parseConditions(obj map[string]any, fields map[string]bool) (condition, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out allOf
	for _, key := range keys {
		val := obj[key]
		switch {
		case key == "+and" || key == "+or":
			subs, err := parseBranches(key, val, fields)
			if err != nil {
				return nil, err
			}
			if key == "+and" {
				out = append(out, allOf(subs))
			} else {
				out = append(out, anyOf(subs))
			}
		case strings.HasPrefix(key, "+"):
			return nil, fmt.Errorf("Unknown filter operator %q", key)
		default:
			c, err := parseFieldCondition(key, val, fields)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func parseBranches(op string, val any, fields map[string]bool) ([]condition, error) {
	list, ok := val.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%s requires a non-empty list of filters", op)
	}
	subs := make([]condition, 0, len(list))
	for _, el := range list {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s requires a list of filter objects", op)
		}
		c, err := parseConditions(m, fields)
		if err != nil {
			return nil, err
		}
		subs = append(subs, c)
	}
	return subs, nil
}

func parseFieldCondition(field string, val any, fields map[string]bool) (condition, error) {
	if !fields[field] {
		return nil, fmt.Errorf("Cannot filter on %s", field)
	}
	switch v := val.(type) {
	case map[string]any:
		if len(v) != 1 {
			return nil, fmt.Errorf("Filter on %s must have exactly one operator", field)
		}
		for op, operand := range v {
			if !comparisonOps[op] {
				return nil, fmt.Errorf("Unknown filter operator %q", op)
			}
			if !isScalar(operand) {
				return nil, fmt.Errorf("Filter value for %s must be a scalar", field)
			}
			return comparison{field: field, op: op, value: operand}, nil
		}
	case []any:
		return nil, fmt.Errorf("Filter value for %s must be a scalar", field)
	}
	return comparison{field: field, op: "+eq", value: val}, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, float64, bool, nil:
		return true
	}
	return false
}

// apply returns the items that match, in the requested order.
func (f *filter) apply(items []json.RawMessage) ([]json.RawMessage, error) {
	type decoded struct {
		raw json.RawMessage
		obj map[string]any
	}
	kept := make([]decoded, 0, len(items))
	for _, raw := range items {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		if f.cond.match(obj) {
			kept = append(kept, decoded{raw, obj})
		}
	}
	if f.orderBy != "" {
		slices.SortStableFunc(kept, func(a, b decoded) int {
			order, _ := compareOrdered(fieldValue(a.obj, f.orderBy), fieldValue(b.obj, f.orderBy))
			if f.desc {
				return -order
			}
			return order
		})
	}
	out := make([]json.RawMessage, len(kept))
	for i, d := range kept {
		out[i] = d.raw
	}
	return out, nil
}
