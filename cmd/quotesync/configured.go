package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

const configuredHelp = `Usage: quotesync configured [--config FILE]

The unit's start condition (ExecCondition=): it tells a service that is
not configured yet (the package just installed: the token not in place,
or remote.base_url still the example's) from one whose configuration is
wrong. Not configured: it prints what to do and exits 1, and systemd
leaves the unit inactive, without a failure and without restarts, until
it is started again. Anything else (a file that does not parse, a wrong
key) is left to 'quotesync run', which names it and exits 2.

Exit status: 0 configured (or wrong in another way), 1 not configured
yet, 2 bad flags.

Example:
  quotesync configured --config /etc/quotesync/config.yaml
`

// notConfiguredHelp is what the journal shows under a unit that waits;
// notConfiguredSiteHelp under a site of the template unit (%[2]s: the
// site).
const notConfiguredHelp = `quotesync is installed but %v.
The service stays stopped (not failed) until then. To configure it:
  1. the insurer's token:  sudo install -m 0600 /dev/null /etc/quotesync/credentials/token && sudoedit /etc/quotesync/credentials/token
  2. the database password, if any:  sudoedit /etc/quotesync/credentials/db-password
  3. the shop's mapping and the insurer's address:  sudoedit /etc/quotesync/config.yaml
  4. check it all:  sudo CREDENTIALS_DIRECTORY=/etc/quotesync/credentials quotesync check
  5. start it:  sudo systemctl enable --now quotesync
`

const notConfiguredSiteHelp = `quotesync's site %[2]s is %[1]v.
The service stays stopped (not failed) until then. To configure it:
  1. the insurer's token:  sudo install -d -m 0700 /etc/quotesync/sites/%[2]s && sudo install -m 0600 /dev/null /etc/quotesync/sites/%[2]s/token && sudoedit /etc/quotesync/sites/%[2]s/token
  2. the database password, if any:  sudoedit /etc/quotesync/sites/%[2]s/db-password
  3. the shop's mapping and the insurer's address:  sudoedit /etc/quotesync/sites/%[2]s.yaml
  4. check it all:  sudo CREDENTIALS_DIRECTORY=/etc/quotesync/sites/%[2]s quotesync check --site %[2]s
  5. start it:  sudo systemctl enable --now quotesync@%[2]s
`

func runConfigured(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("configured", configuredHelp)
	cfg := registerConfig(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	path := cfg.path()
	fc, err := config.Load(path)
	if err != nil {
		return exitOK // run names it, with exit status 2
	}
	if err := fc.Configured(os.Getenv); err != nil {
		if cfg.site != "" {
			fmt.Fprintf(stdout, notConfiguredSiteHelp, err, cfg.site)
		} else {
			fmt.Fprintf(stdout, notConfiguredHelp, err)
		}
		return exitFailure
	}
	return exitOK
}
