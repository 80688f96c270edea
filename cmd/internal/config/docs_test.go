package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// configurationPage is the reference page of the configuration file.
const configurationPage = "../../../docs/configuration.md"

// TestConfigurationPageDocumentsEveryKey: docs/configuration.md names
// every key of the file, as its whole path in backticks
// ("`remote.token.oauth2.client_id`"): every key the file structs have
// (config.example.yaml shows each of them, set or commented out: see
// TestExampleDocumentsEveryKey), every key config.example.yaml sets, and
// the keys of a remotes: entry beyond those of remote:.
func TestConfigurationPageDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(configurationPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)

	keys := yamlKeys(reflect.TypeFor[File](), "")
	if len(keys) < 60 {
		t.Fatalf("found only %d keys in File; the reflection walk is broken", len(keys))
	}
	keys = append(keys, yamlKeys(reflect.TypeFor[RemoteEntry](), "remotes[]")...)

	example, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(example, &doc); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	nodeKeys(&doc, "", set)
	for k := range set {
		// The entries of maps are the shop's codes and names, not keys.
		if !strings.HasPrefix(k, "shop.params.") && !strings.HasPrefix(k, "shop.work_types.") && !strings.HasPrefix(k, "quote.rates.") {
			keys = append(keys, k)
		}
	}

	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if !strings.Contains(page, "`"+k+"`") {
			t.Errorf("docs/configuration.md does not document %s (write it as `%s` in its section's table)", k, k)
		}
	}
}
