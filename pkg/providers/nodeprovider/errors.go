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

// ForeignNodeError says a Linode (or its LKE pool) is not proven this cluster's node, or not the
// NodeClaim's: the provider neither deletes, drains, adopts nor reboots it, and does not call it
// gone either (its NodeClaim would be finalized while it runs).
type ForeignNodeError struct {
	// InstanceID and Label name the Linode; Label is empty when unknown.
	InstanceID int
	Label      string
	// Reason says why the Linode is not this cluster's, or not the NodeClaim's.
	Reason string
}

// NewForeignNodeError says why the Linode with the id and label is not ours to act on.
func NewForeignNodeError(instanceID int, label, reason string) *ForeignNodeError {
	return &ForeignNodeError{InstanceID: instanceID, Label: label, Reason: reason}
}

func (e *ForeignNodeError) Error() string {
	return fmt.Sprintf("%s is not proven ours to act on: %s", DescribeLinode(e.InstanceID, e.Label), e.Reason)
}

// IsForeignNode reports whether err is, or wraps, a ForeignNodeError.
func IsForeignNode(err error) bool {
	_, ok := AsForeignNode(err)
	return ok
}

// AsForeignNode returns the ForeignNodeError err is or wraps.
func AsForeignNode(err error) (*ForeignNodeError, bool) {
	var foreign *ForeignNodeError
	ok := errors.As(err, &foreign)
	return foreign, ok
}

// DescribeLinode names a Linode by its id and, when known, its label.
func DescribeLinode(instanceID int, label string) string {
	if label == "" {
		return fmt.Sprintf("Linode %d", instanceID)
	}
	return fmt.Sprintf("Linode %d (%s)", instanceID, label)
}
