package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// timeLayout is the API's timestamp format: no zone, no fraction. linodego
// fails to decode anything else (a trailing "Z" included).
const timeLayout = "2006-01-02T15:04:05"

// Page sizes the API accepts; anything outside is a 400 on page_size.
const (
	minPageSize     = 25
	maxPageSize     = 500
	defaultPageSize = 100
)

// apiTime marshals as the API's zone-less UTC timestamp.
type apiTime time.Time

func (t apiTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timeLayout) + `"`), nil
}

// fieldError is one entry of the API's error envelope.
type fieldError struct {
	Reason string `json:"reason"`
	Field  string `json:"field,omitempty"`
}

// apiError is a complete error answer: a status and the entries of
// {"errors": [...]}.
type apiError struct {
	Status int
	Errors []fieldError
}

func (e *apiError) Error() string {
	if len(e.Errors) == 0 {
		return strconv.Itoa(e.Status)
	}
	return fmt.Sprintf("%d [%s] %s", e.Status, e.Errors[0].Field, e.Errors[0].Reason)
}

func errNotFound() *apiError {
	return &apiError{Status: http.StatusNotFound, Errors: []fieldError{{Reason: "Not found"}}}
}

func errInvalid(field, reason string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Errors: []fieldError{{Field: field, Reason: reason}}}
}

func errStatus(status int, reason string) *apiError {
	return &apiError{Status: status, Errors: []fieldError{{Reason: reason}}}
}

// listResult is what list handlers return: the full, unfiltered collection
// in the API's natural order. The router filters, sorts and paginates it.
type listResult struct {
	items []json.RawMessage
	// fields are the names X-Filter may refer to (the objects' top-level keys).
	fields map[string]bool
}

// newList marshals items for a paginated answer. sample is a zero value of
// the item type; its JSON keys decide which fields X-Filter accepts, so an
// empty collection still rejects unknown fields.
func newList[T any](items []T, sample T) (listResult, error) {
	out := listResult{items: make([]json.RawMessage, 0, len(items))}
	for _, it := range items {
		raw, err := json.Marshal(it)
		if err != nil {
			return out, err
		}
		out.items = append(out.items, raw)
	}
	fields, err := jsonKeys(sample)
	out.fields = fields
	return out, err
}

func jsonKeys(v any) (map[string]bool, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys, nil
}

// emptyObject is the body of successful deletes and actions: "{}".
type emptyObject struct{}

// rawJSON is a handler result that is already encoded.
type rawJSON []byte

// encodeResult renders a handler's result as the response body.
func encodeResult(r *http.Request, result any) ([]byte, *apiError) {
	switch v := result.(type) {
	case listResult:
		return encodeList(r, v)
	case rawJSON:
		return v, nil
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, errStatus(http.StatusInternalServerError, err.Error())
		}
		return raw, nil
	}
}

// encodeList applies X-Filter and pagination the way the API does:
// {"data": [...], "page": p, "pages": n, "results": total}, with at least one
// page even when there are no results.
func encodeList(r *http.Request, list listResult) ([]byte, *apiError) {
	page, pageSize, perr := pageParams(r)
	if perr != nil {
		return nil, perr
	}
	items := list.items
	if header := r.Header.Get("X-Filter"); header != "" {
		f, err := parseFilter(header, list.fields)
		if err != nil {
			return nil, errInvalid("X-Filter", err.Error())
		}
		if items, err = f.apply(items); err != nil {
			return nil, errInvalid("X-Filter", err.Error())
		}
	}
	total := len(items)
	pages := max(1, (total+pageSize-1)/pageSize)
	start := min((page-1)*pageSize, total)
	end := min(start+pageSize, total)

	var buf bytes.Buffer
	buf.WriteString(`{"data": [`)
	for i, it := range items[start:end] {
		if i > 0 {
			buf.WriteString(", ")
		}
		buf.Write(it)
	}
	fmt.Fprintf(&buf, `], "page": %d, "pages": %d, "results": %d}`, page, pages, total)
	return buf.Bytes(), nil
}

func pageParams(r *http.Request) (page, pageSize int, err *apiError) {
	q := r.URL.Query()
	page, pageSize = 1, defaultPageSize
	if s := q.Get("page"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 1 {
			return 0, 0, errInvalid("page", "Must be a positive integer")
		}
		page = n
	}
	if s := q.Get("page_size"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < minPageSize || n > maxPageSize {
			return 0, 0, errInvalid("page_size", fmt.Sprintf("Must be %d-%d", minPageSize, maxPageSize))
		}
		pageSize = n
	}
	return page, pageSize, nil
}

// writeBody writes a JSON answer. Content-Type is exactly "application/json":
// linodego refuses error bodies with any parameter appended.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func errorBody(e *apiError) []byte {
	raw, _ := json.Marshal(struct {
		Errors []fieldError `json:"errors"`
	}{e.Errors})
	return raw
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeBody(w, e.Status, errorBody(e))
}

// maxBodyBytes bounds request bodies; the API's largest (user data) is 64 KiB.
const maxBodyBytes = 1 << 20

// decodeBody reads a JSON request body into v. An empty body decodes as {}.
// bufferBody reads the request's body, up to maxBodyBytes, into memory for the handler.
func bufferBody(r *http.Request) *apiError {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return errInvalid("", "Unable to read request body")
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return nil
}

func decodeBody(r *http.Request, v any) *apiError {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return errInvalid("", "Unable to read request body")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errInvalid("", "Invalid JSON: "+err.Error())
	}
	return nil
}

// decodeBodyKeys decodes a JSON body into v and tells which top-level keys it had, for fields
// where null and absent mean different things.
func decodeBodyKeys(r *http.Request, v any) (map[string]bool, *apiError) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return nil, errInvalid("", "Unable to read request body")
	}
	present := map[string]bool{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return present, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, errInvalid("", "Invalid JSON: "+err.Error())
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, errInvalid("", "Invalid JSON: "+err.Error())
	}
	for key := range fields {
		present[key] = true
	}
	return present, nil
}
