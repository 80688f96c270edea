package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// userAgent names quotesync and its version in every remote call.
func userAgent() string { return "quotesync/" + version }

const versionHelp = `Usage: quotesync version

Prints the version of quotesync, the Go release it was built with and
the platform.

Exit status: 0, or 2 for a bad command line.

Example:
  quotesync version

`

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("version", versionHelp)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fmt.Fprintf(stdout, "quotesync %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
