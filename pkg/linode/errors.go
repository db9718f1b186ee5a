package linode

import (
	"errors"
	"net/http"
	"strings"

	"github.com/linode/linodego"
)

// capacityReasonMarker is the text of the reason Linode gives when a region cannot launch more
// of a plan. The emulator answers with the same wording.
const capacityReasonMarker = "insufficient capacity"

// IsNotFound reports whether the API said the object does not exist (404). It is the only
// answer that lets the provider conclude a node is gone.
func IsNotFound(err error) bool {
	return linodego.IsNotFound(err)
}

// IsInsufficientCapacity reports whether a create failed because the region has no capacity
// left for the plan: a reason to try another offering, not to give up.
func IsInsufficientCapacity(err error) bool {
	var apiErr *linodego.Error
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest {
		return false
	}
	return strings.Contains(strings.ToLower(apiErr.Message), capacityReasonMarker)
}

// IsInvalidRequest reports whether the API refused the request as invalid (400), other than for
// capacity: retrying the same request cannot succeed; the NodeClass or the plan must change.
func IsInvalidRequest(err error) bool {
	var apiErr *linodego.Error
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusBadRequest && !IsInsufficientCapacity(err)
}

// IsUnauthorized reports whether the token is missing, wrong, or lacks the needed scope.
func IsUnauthorized(err error) bool {
	return linodego.ErrHasStatus(err, http.StatusUnauthorized, http.StatusForbidden)
}

// IsRetryable reports whether the failure is transient (rate limit, server error, timeout):
// the same request may succeed later. Such errors never mark an offering unavailable.
func IsRetryable(err error) bool {
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
