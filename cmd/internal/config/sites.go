package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// Many sites on one host: the template unit quotesync@.service runs one
// daemon per site, the instance name being the site's name.

// SitesDir holds the sites of the template unit: SITE.yaml, the site's
// configuration, and SITE/, the directory of its secrets (token,
// db-password) that LoadCredential= hands to the service.
const SitesDir = "/etc/quotesync/sites"

// siteName is what a site's name may hold: it names a file, a directory
// and a runtime directory, and is the instance of a systemd unit.
var siteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckSiteName says why name cannot be a site's name (nil when it can).
func CheckSiteName(name string) error {
	if !siteName.MatchString(name) {
		return fmt.Errorf("site %q: a site's name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// SitePath is the configuration file of site under SitesDir.
func SitePath(site string) string {
	return filepath.Join(SitesDir, site+".yaml")
}

// SiteControlSocket is control.socket's default for site: the template
// unit's RuntimeDirectory=quotesync@%i.
func SiteControlSocket(site string) string {
	return "/run/quotesync@" + site + "/control.sock"
}

// SetSite says that the file is read for site, of the template unit
// ("" for none): control.socket's default is then SiteControlSocket's.
func (c *File) SetSite(site string) {
	c.site = site
}

// Siblings lists the other configuration files that may run on the same
// host as the one at path, sorted: the *.yaml files in its directory, in
// the "sites" directory below it, and, when its directory is a "sites"
// directory, in the directory above (the single unit's config.yaml beside
// the template's sites).
func Siblings(path string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(abs)
	dirs := []string{dir, filepath.Join(dir, "sites")}
	if filepath.Base(dir) == "sites" {
		dirs = append(dirs, filepath.Dir(dir))
	}
	self, selfErr := os.Stat(abs)
	var out []string
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f == abs {
				continue
			}
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() || (selfErr == nil && os.SameFile(st, self)) {
				continue
			}
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ControlSection is the daemon's control socket: `quotesync sync-now`
// connects to it to ask the running daemon for a pass at once.
type ControlSection struct {
	// Socket is the unix socket's path; "" means DefaultControlSocket
	// (the unit's RuntimeDirectory=), "off" none (SIGUSR1 still asks for
	// a pass).
	Socket string `yaml:"socket"`
}

const (
	// DefaultControlSocket is control.socket's default: systemd creates
	// /run/quotesync for the service (RuntimeDirectory=quotesync).
	DefaultControlSocket = "/run/quotesync/control.sock"
	// ControlOff is the control.socket value that disables the socket.
	ControlOff = "off"
	// maxSocketPath is the longest path a unix socket address holds
	// (sun_path is 108 bytes with its NUL).
	maxSocketPath = 107
)

// SocketFor returns the socket's path ("" when off) for site of the
// template unit ("" for none; the default is then SiteControlSocket's),
// and whether it is the default rather than a path of the file.
func (c ControlSection) SocketFor(site string) (path string, isDefault bool) {
	switch c.Socket {
	case "":
		return defaultSocket(site), true
	case ControlOff:
		return "", false
	}
	return c.Socket, false
}

// defaultSocket is control.socket's default: the site's when the file is
// read for one.
func defaultSocket(site string) string {
	if site != "" {
		return SiteControlSocket(site)
	}
	return DefaultControlSocket
}

// buildOps takes the operators' keys: the control section, and
// shop.single_writer.
func (c *File) buildOps(s *Settings) error {
	s.SingleWriter = c.Shop.SingleWriter
	s.Control = c.Control
	s.Site = c.site
	p := c.Control.Socket
	if p == "" || p == ControlOff {
		return nil
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("control.socket: %q must be an absolute path such as %s, or off", p, DefaultControlSocket)
	}
	if len(p) > maxSocketPath {
		return fmt.Errorf("control.socket: %q is %d bytes, longer than a unix socket path may be (%d); choose a shorter path", p, len(p), maxSocketPath)
	}
	return nil
}
