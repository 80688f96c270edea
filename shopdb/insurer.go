package shopdb

// DefaultInsurer is the name of the insurer of a lone remote: section,
// and the insurer the DB Open returns works for.
const DefaultInsurer = "default"

// workTypesKey is where the shop's work types are configured.
const workTypesKey = "shop.work_types"

// Insurer returns a DB for the insurer name, on the same pool: :insurer in
// the mapping's statements is its name, and its jobs' lines are read with
// Config.WorkTypes (see WithWorkTypes). Nothing is read or checked.
func (db *DB) Insurer(name string) *DB {
	return &DB{pool: db.pool, insurer: name, workTypes: db.cfg.WorkTypes, workKey: workTypesKey}
}

// WithWorkTypes returns db reading its jobs' lines with workTypes (the
// shop's merged with its insurer's own), configured under key (for
// messages, e.g. "shop.work_types or remotes[aa].work_types").
func (db *DB) WithWorkTypes(workTypes map[string]string, key string) *DB {
	return &DB{pool: db.pool, insurer: db.insurer, workTypes: workTypes, workKey: key}
}

// InsurerName is the name of the insurer db works for.
func (db *DB) InsurerName() string { return db.insurer }
