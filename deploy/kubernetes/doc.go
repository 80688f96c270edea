// Package kubernetes holds no Go code: it is the home of the example
// manifests that run quotesync's sites on Kubernetes (a kustomize base and
// one overlay per site), and of the test that renders every site and
// decodes what kubectl would apply, strictly, into the Kubernetes API
// types. It is a module of its own so that those types are no dependency
// of quotesync's.
package kubernetes
