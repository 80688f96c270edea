// Package systemd holds no Go code: it is the home of what installs quotesync
// on a Debian machine, and of the tests that check it.
//
//   - quotesync.service: the hardened systemd unit (Type=notify, watchdog,
//     LoadCredential= for the token and the database password).
//   - quotesync@.service: the same unit for many sites on one host, the
//     instance being the site (/etc/quotesync/sites/%i.yaml, --site %i).
//   - build-deb, nfpm.yaml, deb/: the .deb (`make deb`), built with nfpm.
//   - README.md: the install notes, shipped as README.Debian.
//
// The tests (package systemd_test) run systemd-analyze verify and security on
// the unit, build the package and inspect it with dpkg-deb, and install it
// with dpkg into a throwaway overlay of the machine's root. With
// QUOTESYNC_SOAK=1 one more boots systemd in a container on such an overlay
// and runs the packaged unit with a probe binary (testdata/probe).
package systemd
