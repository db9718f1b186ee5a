package emulator

import "fmt"

// maxTagLength is the API's limit on tag length.
const maxTagLength = 50

func (e *Emulator) validateRegion(field, regionID, capability string) (region, *apiError) {
	reg, ok := e.cat.regionByID[regionID]
	if !ok {
		return region{}, errInvalid(field, "region is not valid")
	}
	if capability != "" && !reg.has(capability) {
		return region{}, errInvalid(field, fmt.Sprintf("%s is not available in %s", capability, regionID))
	}
	return reg, nil
}

// validatePlan checks that the plan exists and that the region offers its
// class (GPU and premium plans need a region capability).
func (e *Emulator) validatePlan(field, planID string, reg region) (plan, *apiError) {
	p, ok := e.cat.typeByID[planID]
	if !ok {
		return plan{}, errInvalid(field, "A valid plan type by that ID was not found")
	}
	if needed := p.requiredCapability(); needed != "" && !reg.has(needed) {
		return plan{}, errInvalid(field, fmt.Sprintf("%s requires %s, which are not available in %s", planID, needed, reg.ID))
	}
	return p, nil
}

// validateLKEPlan adds LKE's own rule: Nanodes (1 GB) cannot be pool nodes,
// with the wording the API has used since 2020.
func (e *Emulator) validateLKEPlan(field, planID, regionID string) *apiError {
	p, err := e.validatePlan(field, planID, e.cat.regionByID[regionID])
	if err != nil {
		return err
	}
	if p.Class == "nanode" {
		return errInvalid(field, fmt.Sprintf("The Linode type %s is currently not supported by LKE", planID))
	}
	return nil
}

// validateOptionalTags checks tags a request may leave out (nil).
func validateOptionalTags(field string, tags *[]string) *apiError {
	if tags == nil {
		return nil
	}
	return validateTags(field, *tags)
}

func validateTags(field string, tags []string) *apiError {
	for _, t := range tags {
		if len(t) < 1 || len(t) > maxTagLength {
			return errInvalid(field, fmt.Sprintf("Length must be 1-%d characters", maxTagLength))
		}
	}
	return nil
}

var taintEffects = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}

func validateTaints(field string, taints []poolTaint) *apiError {
	for _, t := range taints {
		if t.Key == "" {
			return errInvalid(field, "Taint key is required")
		}
		if !taintEffects[t.Effect] {
			return errInvalid(field, "Effect must be one of NoSchedule, PreferNoSchedule, NoExecute")
		}
	}
	return nil
}

func validateAutoscaler(field string, a poolAutoscaler) *apiError {
	if a.Enabled && (a.Min < 1 || a.Max > 100 || a.Min > a.Max) {
		return errInvalid(field, "min and max must satisfy 1 <= min <= max <= 100")
	}
	return nil
}

func validateUpdateStrategy(field, s string) *apiError {
	if s != "rolling_update" && s != "on_recycle" {
		return errInvalid(field, "Must be one of rolling_update, on_recycle")
	}
	return nil
}

func (e *Emulator) validateFirewall(field string, id int) *apiError {
	if _, ok := e.st.firewalls[id]; !ok {
		return errInvalid(field, fmt.Sprintf("Firewall %d not found", id))
	}
	return nil
}
