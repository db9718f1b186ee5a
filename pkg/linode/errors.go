package linode

import (
	"errors"
	"net/http"
	"strings"

	"github.com/linode/linodego"
)

// RefusalKind sorts Linode's refusals of a create by what they say about the next attempts.
type RefusalKind string

const (
	// RefusalCapacity: the region cannot launch the plan at the moment. Linode answers 403, "The
	// Linode plan you chose is not currently available in the selected region. Please select
	// another region or plan type, or contact Support for assistance." (earlier: "There is no
	// availability for the selected plan in the selected region").
	RefusalCapacity RefusalKind = "InsufficientCapacity"
	// RefusalAccountLimit: the account reached one of its limits, e.g. "You’ve reached the limit
	// for the number of active vCPUs in this Linode plan. Please contact Support to request an
	// increase ..." or "Account Limit Reached. Please open a support ticket."; it lifts when
	// Support raises the limit or the account's other Linodes go.
	RefusalAccountLimit RefusalKind = "AccountLimit"
	// RefusalInvalid: the API refused the request's content (400); Refusal.Fields names the
	// parts it objected to, e.g. "type" for a plan the account or LKE may not use.
	RefusalInvalid RefusalKind = "Invalid"
)

// Refusal is a create Linode refused for a reason that retrying the same request soon will not
// change.
type Refusal struct {
	Kind RefusalKind
	// Fields are the request fields the API named ("type", "firewall_id", ...), none when it
	// named none.
	Fields []string
	// Reason is the API's own explanation, for events and conditions.
	Reason string
}

// Lower-cased phrases of Linode's reasons, matched in the lower-cased reason with typographic
// apostrophes straightened.
var (
	capacityPhrases = []string{
		"not currently available in the selected region",
		"no availability for the selected plan",
		"insufficient capacity",
	}
	accountLimitPhrases = []string{
		"reached the limit",
		"account limit reached",
	}
)

// busyReason is the whole reason of a 400 Linode gives while the object is busy with an earlier
// operation; linodego retries it, and once its retries run out it is still worth retrying later.
const busyReason = "Linode busy."

// AsRefusal reports whether err is Linode refusing a create, and how. Transient failures (rate
// limits, "Linode busy.", server errors, timeouts), a refused token and "not found" are not
// refusals.
func AsRefusal(err error) (Refusal, bool) {
	var apiErr *linodego.Error
	if !errors.As(err, &apiErr) || (apiErr.Code != http.StatusBadRequest && apiErr.Code != http.StatusForbidden) {
		return Refusal{}, false
	}
	reasons := parseReasons(apiErr.Message)
	text := normalized(apiErr.Message)
	refusal := Refusal{Reason: apiErr.Message}
	for _, r := range reasons {
		if r.Field != "" {
			refusal.Fields = append(refusal.Fields, r.Field)
		}
	}
	switch {
	case containsAny(text, capacityPhrases):
		refusal.Kind = RefusalCapacity
	case containsAny(text, accountLimitPhrases):
		refusal.Kind = RefusalAccountLimit
	case apiErr.Code == http.StatusForbidden, isBusy(apiErr):
		// A 403 that names no plan or limit is the token's scope; busy is transient.
		return Refusal{}, false
	default:
		refusal.Kind = RefusalInvalid
	}
	return refusal, true
}

// IsNotFound reports whether the API said the object does not exist (404). It is the only
// answer that lets the provider conclude a node is gone.
func IsNotFound(err error) bool {
	return linodego.IsNotFound(err)
}

// IsInsufficientCapacity reports whether a create failed because the region has no capacity
// left for the plan: a reason to try another offering, not to give up.
func IsInsufficientCapacity(err error) bool {
	refusal, ok := AsRefusal(err)
	return ok && refusal.Kind == RefusalCapacity
}

// IsInvalidRequest reports whether the API refused the request's content as invalid (400):
// retrying the same request cannot succeed.
func IsInvalidRequest(err error) bool {
	refusal, ok := AsRefusal(err)
	return ok && refusal.Kind == RefusalInvalid
}

// IsUnauthorized reports whether the token is missing, wrong, revoked, or lacks the needed scope:
// a 401, or a 403 that is not a refusal of a plan or limit (those come as 403 too).
func IsUnauthorized(err error) bool {
	if linodego.ErrHasStatus(err, http.StatusUnauthorized) {
		return true
	}
	_, refused := AsRefusal(err)
	return linodego.ErrHasStatus(err, http.StatusForbidden) && !refused
}

// IsRetryable reports whether the failure is transient (rate limit, a request not sent for want of
// a turn in it, "Linode busy.", server error, timeout): the same request may succeed later. Such
// errors never mark an offering unavailable.
func IsRetryable(err error) bool {
	if IsNoTurn(err) {
		return true
	}
	var apiErr *linodego.Error
	if errors.As(err, &apiErr) && isBusy(apiErr) {
		return true
	}
	return linodego.ErrHasStatus(err, http.StatusTooManyRequests, http.StatusRequestTimeout,
		http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout)
}

// Reason returns the API's own explanation of a failure, for NodeClass conditions and events.
func Reason(err error) string {
	var apiErr *linodego.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return apiErr.Message
	}
	return err.Error()
}

func isBusy(apiErr *linodego.Error) bool {
	return apiErr.Code == http.StatusBadRequest && strings.TrimSpace(apiErr.Message) == busyReason
}

// fieldReason is one entry of the API's "errors" list.
type fieldReason struct {
	Field, Reason string
}

// parseReasons splits linodego's rendering of the API's errors, "[field] reason; reason", back
// into its entries.
func parseReasons(message string) []fieldReason {
	var out []fieldReason
	for _, part := range strings.Split(message, "; ") {
		if rest, ok := strings.CutPrefix(part, "["); ok {
			if field, reason, ok := strings.Cut(rest, "] "); ok && !strings.ContainsAny(field, " []") {
				out = append(out, fieldReason{Field: field, Reason: reason})
				continue
			}
		}
		out = append(out, fieldReason{Reason: part})
	}
	return out
}

func normalized(text string) string {
	return strings.ToLower(strings.NewReplacer("’", "'", "‘", "'").Replace(text))
}

func containsAny(text string, phrases []string) bool {
	for _, phrase := range phrases {
		if strings.Contains(text, phrase) {
			return true
		}
	}
	return false
}
