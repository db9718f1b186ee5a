// Package requestrules is what the emulator knows of the request bodies Linode refuses: Linode's
// OpenAPI description (../shared/linode-api/openapi.yaml, with the corrections the recordings of
// the real API call for, corrections.go) and, where the description is silent, Linode's published
// request rules (npm @linode/validation 0.83.0) written in Go (rules.go). Each rule says where it
// comes from.
package requestrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"log"
	"strings"
)

// Check returns why Linode refuses body on method path (a path of the API with its version
// prefix, e.g. /v4/linode/instances), or nil when the rules accept it. A body that is not a JSON
// object is left to the route, which answers as the API does. The error is not nil only when the
// description is needed and cannot be read (absent under CI=true, or corrupt).
func Check(method, path string, body []byte) (*Refusal, error) {
	var object map[string]any
	if len(bytes.TrimSpace(body)) == 0 || json.Unmarshal(body, &object) != nil {
		return nil, nil
	}
	d, err := loadDescription()
	switch {
	case err == nil:
		if r := d.check(method, path, body); r != nil {
			return r, nil
		}
	case errors.Is(err, errDescriptionAbsent):
		absentOnce.Do(func() {
			log.Printf("emulator: %s is absent; request bodies are checked by the Go rules of @linode/validation only", DescriptionPath())
		})
	default:
		return nil, err
	}
	for _, rule := range goRules {
		if rule.method == method && matchesPath(rule.path, path) {
			return rule.check(object), nil
		}
	}
	return nil, nil
}

// withoutVersion strips the /v4 or /v4beta prefix.
func withoutVersion(path string) string {
	for _, prefix := range []string{"/v4beta/", "/v4/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			return "/" + rest
		}
	}
	return path
}

// matchesPath reports whether path (with its version prefix) is of the template rulePath.
func matchesPath(rulePath, path string) bool {
	return matches(strings.Split(rulePath, "/"), strings.Split(withoutVersion(path), "/"))
}
