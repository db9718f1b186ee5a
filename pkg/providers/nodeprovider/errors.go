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

// ForeignNodeError says a provider ID names a Linode that exists but is not one of this cluster's
// nodes: neither gone (its NodeClaim would be finalized while it runs) nor the provider's to
// delete.
type ForeignNodeError struct{ Err error }

// NewForeignNodeError wraps why the Linode is not this cluster's.
func NewForeignNodeError(err error) *ForeignNodeError { return &ForeignNodeError{Err: err} }

func (e *ForeignNodeError) Error() string { return e.Err.Error() }

func (e *ForeignNodeError) Unwrap() error { return e.Err }

// IsForeignNode reports whether err is, or wraps, a ForeignNodeError.
func IsForeignNode(err error) bool {
	var foreign *ForeignNodeError
	return errors.As(err, &foreign)
}
