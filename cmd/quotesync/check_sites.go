package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// checkSitesName is the check's line.
const checkSitesName = "other sites"

// checkSites compares the footprint of the file at path (its state tables
// and its lock on the database server) with those of the other
// configurations of this host (config.Siblings): a site that shares
// either with another stands by for ever or, worse, works the other's
// requests. Files that are still the installed example are left out;
// files that cannot be read are named.
func checkSites(cl *checklist, path string, mine shopdb.Config, getenv func(string) string) {
	siblings, err := config.Siblings(path)
	if err != nil {
		cl.add(qsync.CheckWarn, checkSitesName, "not compared: %v", err)
		return
	}
	fp := mine.Footprint()
	var shared, unread []string
	compared := 0
	for _, f := range siblings {
		fc, err := config.Load(f)
		if err != nil {
			unread = append(unread, f)
			continue
		}
		if fc.StillExample() {
			continue
		}
		other, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.NoSecrets, UserAgent: userAgent()})
		if err != nil {
			unread = append(unread, f)
			continue
		}
		compared++
		ofp := other.Daemon.Shop.Footprint()
		switch tables, lock := fp.Shares(ofp); {
		case tables && lock:
			shared = append(shared, fmt.Sprintf("%s: the same state tables (%s.%s*) and lock (%s): only one of the two would ever run; give one its own shop.table_prefix, or remove the file a site no longer runs from (a single install moved to a site: its state is these tables)", f, ofp.Database, ofp.TablePrefix, ofp.LockName))
		case tables:
			shared = append(shared, fmt.Sprintf("%s: the same state tables (%s.%s*) under another lock (%s): both would work them at once; give one its own shop.table_prefix and leave shop.lock_name unset", f, ofp.Database, ofp.TablePrefix, ofp.LockName))
		case lock:
			shared = append(shared, fmt.Sprintf("%s: the same lock (%s): only one of the two would ever run; leave shop.lock_name unset (its default names the schema and prefix)", f, ofp.LockName))
		}
	}
	mineIs := fmt.Sprintf("tables %s.%s*, lock %s", fp.Database, fp.TablePrefix, fp.LockName)
	switch {
	case len(shared) > 0:
		cl.add(qsync.CheckFail, checkSitesName, "%s shared with another configuration on this host:\n%s", mineIs, strings.Join(shared, "\n"))
	case len(unread) > 0:
		cl.add(qsync.CheckWarn, checkSitesName, "%s; none of %s shares them; not read (fix them, then check again): %s", mineIs, qsync.Plural(compared, "other configuration"), strings.Join(unread, ", "))
	case compared == 0:
		cl.add(qsync.CheckOK, checkSitesName, "%s; no other configuration in %s", mineIs, siblingDirs(path))
	default:
		cl.add(qsync.CheckOK, checkSitesName, "%s; none of %s on this host shares them", mineIs, qsync.Plural(compared, "other configuration"))
	}
}

// siblingDirs names where config.Siblings looks, for the message.
func siblingDirs(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "sites" {
		return dir + " or " + filepath.Dir(dir)
	}
	return dir + " or " + filepath.Join(dir, "sites")
}
