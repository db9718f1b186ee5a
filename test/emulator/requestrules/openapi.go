package requestrules

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/linode/karpenter-provider-linode/pkg/test/shared"
)

// description is Linode's OpenAPI description, as the operations that take a body, loaded once
// per process: the file is 3.6 MB of YAML and takes about a second to load.
type description struct {
	operations []bodyOperation
}

// bodyOperation is an operation of the description that takes a request body.
type bodyOperation struct {
	method   string
	template []string
	route    *routers.Route
}

var (
	loadOnce   sync.Once
	loaded     *description
	loadErr    error
	absentOnce sync.Once
)

// DescriptionPath is where the description is read from: ../shared/linode-api/openapi.yaml.
func DescriptionPath() string { return filepath.Join(shared.Dir(shared.LinodeAPI), "openapi.yaml") }

// errDescriptionAbsent means the checkout has no ../shared/linode-api: the Go rules still apply.
var errDescriptionAbsent = errors.New("the OpenAPI description is absent")

// Preload starts loading the description in the background, so that the first request does not
// wait the whole load.
func Preload() { go func() { _, _ = loadDescription() }() }

func loadDescription() (*description, error) {
	loadOnce.Do(func() { loaded, loadErr = readDescription(DescriptionPath()) })
	return loaded, loadErr
}

func readDescription(path string) (*description, error) {
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			return nil, fmt.Errorf("%s is needed under CI=true: %w", path, err)
		}
		return nil, errDescriptionAbsent
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	d := &description{}
	markNullable(doc)
	markOptional(doc)
	markExtraEnumValues(doc)
	seen := map[*openapi3.Schema]bool{}
	for template, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, media := range op.RequestBody.Value.Content {
				openObjects(media.Schema, seen)
			}
			d.operations = append(d.operations, bodyOperation{
				method:   method,
				template: strings.Split(template, "/"),
				route:    &routers.Route{Spec: doc, Path: template, PathItem: item, Method: method, Operation: op},
			})
		}
	}
	return d, nil
}

// find returns the operation of method on path (with its /v4 or /v4beta prefix): among the
// templates that match, the one with a literal segment first where they differ, as the API's
// router does (.../firewalls/templates/{slug} before .../firewalls/{firewallId}/devices).
func (d *description) find(method, path string) *bodyOperation {
	segments := strings.Split(path, "/")
	var best *bodyOperation
	for i := range d.operations {
		op := &d.operations[i]
		if op.method != method || !matches(op.template, segments) {
			continue
		}
		if best == nil || literalFirst(op.template, best.template) {
			best = op
		}
	}
	return best
}

func matches(template, segments []string) bool {
	if len(template) != len(segments) {
		return false
	}
	for i, t := range template {
		if strings.HasPrefix(t, "{") {
			if segments[i] == "" {
				return false
			}
			continue
		}
		if t != segments[i] {
			return false
		}
	}
	return true
}

func literalFirst(a, b []string) bool {
	for i := range a {
		aParam, bParam := strings.HasPrefix(a[i], "{"), strings.HasPrefix(b[i], "{")
		if aParam != bParam {
			return bParam
		}
	}
	return false
}

// check validates body against the request schema of its operation (types, enums, patterns,
// required fields) and returns the first refusal, or nil. Read-only fields are let through: the
// API ignores them, and Linode's own Cloud Manager sends one (a VPC interface's vpc_id, read-only
// in the description, required by @linode/validation's ConfigProfileInterfaceSchema).
func (d *description) check(method, path string, body []byte) *Refusal {
	op := d.find(method, path)
	if op == nil {
		return nil
	}
	body = withoutLinodeInterfaces(method, op.route.Path, body)
	req, err := http.NewRequest(method, "http://api.linode.com"+path, bytes.NewReader(body))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	input := &openapi3filter.RequestValidationInput{
		Request: req,
		Route:   op.route,
		Options: &openapi3filter.Options{SkipSettingDefaults: true, RegexCompiler: compilePattern, ExcludeReadOnlyValidations: true},
	}
	err = openapi3filter.ValidateRequestBody(context.Background(), input, op.route.Operation.RequestBody.Value)
	if err == nil {
		return nil
	}
	var schemaErr *openapi3.SchemaError
	if errors.As(err, &schemaErr) {
		pointer, reason := innermost(schemaErr)
		return &Refusal{Field: fieldName(pointer), Reason: reason, Source: "OpenAPI " + method + " " + op.route.Path}
	}
	return &Refusal{Reason: err.Error(), Source: "OpenAPI " + method + " " + op.route.Path}
}

// fieldName writes a JSON pointer as the API names fields in its errors: interfaces[0].ipv4.
func fieldName(pointer []string) string {
	var b strings.Builder
	for _, p := range pointer {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// innermost follows a schema error into the member of allOf, anyOf or oneOf that caused it, and
// returns the path of the field at fault and the reason given there.
func innermost(err *openapi3.SchemaError) ([]string, string) {
	pointer := err.JSONPointer()
	var inner *openapi3.SchemaError
	if err.Origin != nil && errors.As(err.Origin, &inner) && inner != err {
		innerPointer, reason := innermost(inner)
		return append(pointer, innerPointer...), reason
	}
	if err.Reason != "" {
		return pointer, err.Reason
	}
	return pointer, err.Error()
}
