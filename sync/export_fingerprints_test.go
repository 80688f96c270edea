package sync

// FingerprintStatements is how many fingerprint reads the daemon's
// engines sent to the server, theirs joined into one counted once.
func (d *Daemon) FingerprintStatements() int64 { return d.fps.statements.Load() }

// UnshareFingerprints makes each engine of d read the fingerprint on its
// own, as before the engines shared it (to measure what sharing saves).
func (d *Daemon) UnshareFingerprints() {
	for _, e := range d.Engines {
		switch s := e.shop.(type) {
		case sharedStates:
			e.shop = sharedStates{sharedShop{s.DB, &fingerprints{}}, s.states}
		case sharedShop:
			e.shop = s.DB
		}
	}
}

// StatesStatements is how many estimate-state reads the daemon's engines
// sent to the server, theirs read together counted once.
func (d *Daemon) StatesStatements() int64 { return d.states.statements.Load() }
