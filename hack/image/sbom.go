package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// spdxDocument is an SPDX 2.3 JSON document of what the binary was built from, as its build info
// records it: the Go standard library and every module, by version, with its package URL, which
// is what vulnerability scanners match.
func spdxDocument(binary, version string, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	type ref struct {
		Category string `json:"referenceCategory"`
		Type     string `json:"referenceType"`
		Locator  string `json:"referenceLocator"`
	}
	type pkg struct {
		Name             string `json:"name"`
		SPDXID           string `json:"SPDXID"`
		Version          string `json:"versionInfo"`
		DownloadLocation string `json:"downloadLocation"`
		FilesAnalyzed    bool   `json:"filesAnalyzed"`
		ExternalRefs     []ref  `json:"externalRefs"`
	}
	type relationship struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}
	purl := func(path, v string) []ref {
		return []ref{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: fmt.Sprintf("pkg:golang/%s@%s", path, v)}}
	}
	main := pkg{Name: info.Main.Path, SPDXID: "SPDXRef-Package-main", Version: "v" + version, DownloadLocation: sourceURL,
		ExternalRefs: purl(info.Main.Path, "v"+version)}
	packages := []pkg{main, {Name: "stdlib", SPDXID: "SPDXRef-Package-stdlib", Version: info.GoVersion, DownloadLocation: "https://go.dev/dl/",
		ExternalRefs: purl("stdlib", info.GoVersion)}}
	relationships := []relationship{
		{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: main.SPDXID},
		{Element: main.SPDXID, Type: "DEPENDS_ON", Related: "SPDXRef-Package-stdlib"},
	}
	for i, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		p := pkg{Name: dep.Path, SPDXID: fmt.Sprintf("SPDXRef-Package-%d", i), Version: dep.Version, DownloadLocation: "NOASSERTION",
			ExternalRefs: purl(dep.Path, dep.Version)}
		packages = append(packages, p)
		relationships = append(relationships, relationship{Element: main.SPDXID, Type: "DEPENDS_ON", Related: p.SPDXID})
	}
	// The namespace must be unique to this document: the binary's build info and version make it so.
	sum := sha256.Sum256([]byte(info.String() + version))
	return json.MarshalIndent(map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              "karpenter-provider-linode-" + version,
		"documentNamespace": sourceURL + "/spdx/" + version + "-" + hex.EncodeToString(sum[:8]),
		"creationInfo": map[string]any{
			"created":  created.Format(time.RFC3339),
			"creators": []string{"Tool: karpenter-provider-linode/hack/image"},
		},
		"packages":      packages,
		"relationships": relationships,
	}, "", "  ")
}
