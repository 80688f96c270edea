package config

import _ "embed" // the example configuration

// Example is config.example.yaml, the complete, commented example that
// works as is against the sample shop (the demo starts from it). The file
// at the top of the repository is the original; `go generate` copies it
// here and a test keeps the two the same.
//
//go:generate cp ../../../config.example.yaml example.yaml
//go:embed example.yaml
var Example []byte
