package nodeprovider

import (
	"errors"
	"fmt"
)

// InvalidLaunchError is a launch the Linode API refused as invalid: the same request can never
// succeed, so the NodeClass (or the plan) has to change. Reason is the API's own explanation,
// meant for the NodeClaim's and the NodeClass's conditions.
type InvalidLaunchError struct {
	InstanceType string
	Reason       string
	Err          error
}

// NewInvalidLaunchError wraps a refused launch of the instance type.
func NewInvalidLaunchError(err error, instanceType, reason string) *InvalidLaunchError {
	return &InvalidLaunchError{InstanceType: instanceType, Reason: reason, Err: err}
}

func (e *InvalidLaunchError) Error() string {
	return fmt.Sprintf("Linode refused to launch %s: %s", e.InstanceType, e.Reason)
}

func (e *InvalidLaunchError) Unwrap() error { return e.Err }

// IsInvalidLaunch reports whether err is, or wraps, an InvalidLaunchError.
func IsInvalidLaunch(err error) bool {
	var invalid *InvalidLaunchError
	return errors.As(err, &invalid)
}
