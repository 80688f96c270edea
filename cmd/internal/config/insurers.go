package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// RemoteEntry is one insurer of remotes:: the keys of a remote: block, a
// name, and optionally the insurer's own work types, schedule and
// concurrency.
type RemoteEntry struct {
	// Name keys the insurer's state for the life of the install: letters,
	// digits, - and _, 1 to 32 characters, unique. Required.
	Name          string `yaml:"name"`
	RemoteSection `yaml:",inline"`
	// WorkTypes are merged over shop.work_types: the insurer's entry wins
	// for a code. Default: none (the shop's).
	WorkTypes map[string]string `yaml:"work_types"`
	// Schedule and Concurrency replace sync.schedule and sync.concurrency
	// for this insurer; "" and 0: the sync section's.
	Schedule    string `yaml:"schedule"`
	Concurrency int    `yaml:"concurrency"`
}

type remoteBlock struct {
	key string
	r   RemoteSection
}

// remoteBlocks are the file's remote blocks, each with the key it is
// configured under: the lone remote: ("remote"), or each of remotes:
// ("remotes[1]").
func (c *File) remoteBlocks() []remoteBlock {
	if len(c.Remotes) == 0 {
		return []remoteBlock{{"remote", c.Remote}}
	}
	out := make([]remoteBlock, len(c.Remotes))
	for i, e := range c.Remotes {
		out[i] = remoteBlock{fmt.Sprintf("remotes[%d]", i), e.RemoteSection}
	}
	return out
}

// DropRemote removes the remote: section, as if the file had no remote:
// key: for a program that builds remotes: from a file's remote: block
// (the demo), which Build would otherwise refuse as both keys set.
func (c *File) DropRemote() {
	c.Remote, c.remoteLine = RemoteSection{}, 0
}

// buildInsurers checks remote: or remotes: and turns them into the
// daemon's insurers (a lone remote: is the insurer qsync.DefaultInsurer),
// reading the tokens when secrets is set. Every problem names its key.
func (c *File) buildInsurers(s *Settings, getenv func(string) string, secrets bool, userAgent string) error {
	if (!reflect.ValueOf(c.Remote).IsZero() || c.remoteLine > 0) && len(c.Remotes) > 0 {
		at := ""
		if c.remoteLine > 0 {
			at = fmt.Sprintf(" (line %d)", c.remoteLine)
		}
		// An empty remote: {} (or a bare remote:) beside remotes: is
		// refused too: which of the two the file means is not for
		// quotesync to guess.
		return fmt.Errorf("remote%s and remotes: set one, not both: remote: for a single insurer, remotes: (a list, each with a name) for several; "+
			"move the remote: block under remotes: with a name, or delete the remote: key (an empty one too)", at)
	}
	if len(c.Remotes) == 0 {
		ins, err := buildRemote("remote", c.Remote, getenv, secrets, userAgent, s.Daemon.Secrets)
		ins.Name = qsync.DefaultInsurer
		s.Daemon.Insurers, s.TokenFrom = []qsync.Insurer{ins}, ins.TokenFrom
		return err
	}
	loc, _ := c.Sync.location() // a bad zone is sync.time_zone's error
	var errs []error
	seen := map[string]int{}
	for i, e := range c.Remotes {
		key := fmt.Sprintf("remotes[%d]", i)
		ins, err := buildRemote(key, e.RemoteSection, getenv, secrets, userAgent, s.Daemon.Secrets)
		errs = append(errs, err)
		ins.Name, ins.Schedule, ins.Concurrency = e.Name, e.Schedule, e.Concurrency
		switch j, dup := seen[e.Name]; {
		case e.Name == "":
			errs = append(errs, fmt.Errorf("%s.name: required: 1 to %d letters, digits, - or _; it keys the insurer's requests in quotesync's tables, so choose it for good", key, store.MaxInsurerLen))
		case store.CheckInsurerName(e.Name) != nil:
			errs = append(errs, fmt.Errorf("%s.name: %w", key, store.CheckInsurerName(e.Name)))
		case dup:
			errs = append(errs, fmt.Errorf("%s.name: %q is remotes[%d]'s name too; each insurer needs its own (it keys its state)", key, e.Name, j))
		default:
			seen[e.Name] = i
		}
		if e.Schedule != "" {
			errs = append(errs, qsync.CheckSchedule(key+".schedule", e.Schedule, loc))
		}
		if e.Concurrency < 0 || e.Concurrency > 256 {
			errs = append(errs, fmt.Errorf("%s.concurrency: %d is out of range; use 1 to 256, or 0 (no key) for sync.concurrency", key, e.Concurrency))
		}
		if len(e.WorkTypes) > 0 {
			ins.WorkTypes = map[string]string{}
			maps.Copy(ins.WorkTypes, c.Shop.WorkTypes)
			for _, code := range slices.Sorted(maps.Keys(e.WorkTypes)) {
				if strings.TrimSpace(code) == "" || strings.TrimSpace(e.WorkTypes[code]) == "" {
					errs = append(errs, fmt.Errorf("%s.work_types.%s: code and work type must both be non-empty", key, code))
				}
				ins.WorkTypes[code] = e.WorkTypes[code]
			}
		}
		s.Daemon.Insurers = append(s.Daemon.Insurers, ins)
	}
	s.TokenFrom = s.Daemon.Insurers[0].TokenFrom
	return errors.Join(errs...)
}
