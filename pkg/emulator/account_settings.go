package emulator

import "net/http"

// accountSettingsWire is GET /account/settings. interfaces_for_new_linodes is the account's
// default interface generation: legacy configuration profile interfaces, Linode interfaces
// allowed with "interface_generation": "linode", as the recordings show it.
type accountSettingsWire struct {
	Managed                 bool    `json:"managed"`
	NetworkHelper           bool    `json:"network_helper"`
	LongviewSubscription    *string `json:"longview_subscription"`
	BackupsEnabled          bool    `json:"backups_enabled"`
	ObjectStorage           string  `json:"object_storage"`
	InterfacesForNewLinodes string  `json:"interfaces_for_new_linodes"`
	MaintenancePolicy       string  `json:"maintenance_policy"`
}

func (e *Emulator) getAccountSettings(*http.Request) (any, *apiError) {
	return accountSettingsWire{
		ObjectStorage:           "disabled",
		InterfacesForNewLinodes: "legacy_config_default_but_linode_allowed",
		MaintenancePolicy:       "linode/migrate",
	}, nil
}
